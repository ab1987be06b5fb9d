//! The seed token estimate of a record, counted on the line's own bytes
//! (`line_estimate.raw_estimate`), wherever that count is provably the reference's.

use crate::head::{Head, Key, KEYS};
use crate::json::{utf8_at, Kind, Scan, Scanned, Stop, Val, Weights};

/// The seed's exact-arithmetic bound (`pipeline.estimate.seed._EXACT_ARITHMETIC_LIMIT`).
const EXACT_ARITHMETIC_LIMIT: i64 = 1_000_000;
/// The seed's fixed allowance per record.
const RECORD_ALLOWANCE: i64 = 12;
/// Members the seed leaves out of an API record's count.
const IDENTITY: [Key; 6] = [
    Key::Uuid,
    Key::Parent,
    Key::Session,
    Key::Timestamp,
    Key::Cwd,
    Key::Version,
];

/// Which record types the estimate counts, and how.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    User,
    Assistant,
    Attachment,
    System,
    Other,
}

#[derive(Default)]
struct Inventory {
    ascii: i64,
    tenths: i64,
}

fn key_len(key: Key) -> i64 {
    KEYS[key as usize].0.len() as i64
}

/// The characters of a span the scan already validated.
fn span_inventory<W: Weights>(scan: &mut Scan<W>, v: &Val, inv: &mut Inventory) -> Scanned<()> {
    let line = scan.line;
    let mut p = v.start;
    while p < v.end {
        if line[p] < 0x80 {
            inv.ascii += 1;
            p += 1;
            continue;
        }
        let (cp, len) = utf8_at(line, p).ok_or(Stop::Fallback)?;
        inv.tenths += i64::from(scan.weights.weight(cp)?);
        p += len;
    }
    Ok(())
}

/// `int(weighted + ascii / 4 + 0.999)` on exact values, as `pipeline.estimate.seed._tokens`.
fn seed_tokens(ascii: i64, tenths: i64) -> i64 {
    let x = 2 * tenths + 5 * ascii;
    let q = if x >= 0 { (x + 19) / 20 } else { -((-x) / 20) };
    q.max(1) + RECORD_ALLOWANCE
}

/// A string member whose re-serialized spelling (orjson's) is its raw spelling.
fn reserializes_as_written(v: &Val) -> bool {
    v.kind == Kind::Null || (v.kind == Kind::Str && !v.unicode_escape)
}

/// Whether a `costUSD` number re-serializes as written (Python spells 5e-05 what JavaScript
/// spells 0.00005; a value out of range is spelled otherwise too).
fn cost_as_written(line: &[u8], cost: &Val) -> bool {
    let text = &line[cost.start..cost.end];
    let Some(value) = std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<f64>().ok())
    else {
        return false;
    };
    let mantissa = text
        .split(|c| matches!(c, b'e' | b'E'))
        .next()
        .unwrap_or(text);
    let underflow = value == 0.0 && mantissa.iter().any(|c| (b'1'..=b'9').contains(c));
    if !value.is_finite() || underflow {
        return false; // out of range (strtod says ERANGE): the reference spells it otherwise
    }
    text.len() < 64 && (value == 0.0 || value.abs() >= 1e-4)
}

fn api_tokens<W: Weights>(scan: &mut Scan<W>, h: &Head) -> Scanned<i64> {
    let mut ascii = scan.line.len() as i64 - scan.nonascii_bytes;
    let mut tenths = scan.tenths;
    for key in IDENTITY {
        let v = h.get(key);
        if v.kind == Kind::Absent {
            continue;
        }
        if !reserializes_as_written(v) {
            return Err(Stop::Fallback);
        }
        let mut inv = Inventory::default();
        span_inventory(scan, v, &mut inv)?;
        ascii -= inv.ascii + key_len(key) + 4;
        tenths -= inv.tenths;
    }
    Ok(seed_tokens(ascii, tenths))
}

fn system_tokens<W: Weights>(scan: &mut Scan<W>, h: &Head) -> Scanned<i64> {
    let mut inv = Inventory::default();
    let mut parts = 0;
    let subtype = *h.get(Key::Subtype);
    if subtype.kind == Kind::Str {
        if !reserializes_as_written(&subtype) {
            return Err(Stop::Fallback);
        }
        inv.ascii += 10; // "subtype":
        span_inventory(scan, &subtype, &mut inv)?;
        parts += 1;
    } else {
        const NULL_SUBTYPE: &[u8] = b"\"subtype\":null";
        if scan
            .line
            .windows(NULL_SUBTYPE.len())
            .any(|w| w == NULL_SUBTYPE)
        {
            inv.ascii += NULL_SUBTYPE.len() as i64;
            parts += 1;
        }
    }
    for key in [Key::Content, Key::Error, Key::CompactMetadata] {
        let v = *h.get(key);
        if v.kind == Kind::Absent {
            continue;
        }
        inv.ascii += key_len(key) + 3;
        span_inventory(scan, &v, &mut inv)?;
        parts += 1;
    }
    Ok(seed_tokens(inv.ascii + 2 + (parts - 1).max(0), inv.tenths))
}

/// The record's seed estimate; `Stop::Fallback` where the reference must count it.
pub fn estimate<W: Weights>(
    scan: &mut Scan<W>,
    h: &Head,
    is_api: bool,
    counted: Counted,
) -> Scanned<i64> {
    if counted == Counted::Other {
        return Ok(0);
    }
    let cost = h.get(Key::Cost);
    if cost.kind == Kind::Number && !cost_as_written(scan.line, cost) {
        return Err(Stop::Fallback);
    }
    if scan.nonascii_chars > EXACT_ARITHMETIC_LIMIT {
        return Err(Stop::Fallback);
    }
    if is_api {
        return api_tokens(scan, h);
    }
    match counted {
        Counted::Attachment => {
            let attachment = *h.get(Key::Attachment);
            if attachment.kind != Kind::Object {
                return Ok(0);
            }
            let mut inv = Inventory::default();
            span_inventory(scan, &attachment, &mut inv)?;
            Ok(seed_tokens(inv.ascii, inv.tenths))
        }
        Counted::System => system_tokens(scan, h),
        _ => Ok(0),
    }
}

/// `seed.raw_inventory_is_exact`: no `\u` escape, no `0.0000`, no `e-[1-9][,}\]]`.
pub fn inventory_is_exact(line: &[u8]) -> bool {
    let n = line.len();
    !(0..n).any(|i| match line[i] {
        b'\\' => line.get(i + 1) == Some(&b'u'),
        b'0' => line[i..].starts_with(b"0.0000"),
        b'e' => {
            i + 3 < n
                && line[i + 1] == b'-'
                && (b'1'..=b'9').contains(&line[i + 2])
                && matches!(line[i + 3], b',' | b'}' | b']')
        }
        _ => false,
    })
}

/// `decode._is_loose`: whether the writer spaced its separators (the reference counts those).
pub fn is_loose(line: &[u8]) -> bool {
    let n = line.len();
    if n < 2 || line[1] != b'"' {
        return line != b"{}";
    }
    let limit = n.min(512);
    for i in 1..limit.saturating_sub(1) {
        if line[i] == b'"' && line[i + 1] == b':' {
            return matches!(line.get(i + 2), Some(b' ' | b'\t'));
        }
    }
    true
}
