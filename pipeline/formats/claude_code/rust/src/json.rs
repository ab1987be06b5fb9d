//! A validating JSON scanner that builds nothing: it checks a line as strictly as msgspec does
//! (RFC 8259, UTF-8, nesting depth), notes where the few values the index keeps are, and counts
//! the seed estimate's non-ASCII character inventory on the way.
//!
//! Anything unusual is not decided here: the scanner stops with `Stop::Fallback` and the line is
//! read by the pure-Python reference (`decode_record`), so an answer from the fast path is only
//! ever one the reference would give.

use pyo3::PyErr;

/// Why a scan stopped before an answer.
pub enum Stop {
    /// The line goes to the reference, which decides (a syntax error, an odd type, ...).
    Fallback,
    /// A Python call made on the way failed (the character-weight callback).
    Failed(PyErr),
}

pub type Scanned<T> = Result<T, Stop>;

/// The JSON type of a scanned value (`Absent`: the member was not there).
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub enum Kind {
    #[default]
    Absent,
    Null,
    False,
    True,
    Number,
    Str,
    Array,
    Object,
}

/// Where a value is in the line: `start..end` covers a string's quotes.
#[derive(Clone, Copy, Default, Debug)]
pub struct Val {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    /// A string holding a backslash.
    pub escaped: bool,
    /// ... holding `\u` or `\/` (which a re-serializer spells otherwise).
    pub unicode_escape: bool,
}

impl Val {
    /// The bytes between a string's quotes (raw, escapes not undone).
    pub fn inner<'a>(&self, line: &'a [u8]) -> &'a [u8] {
        &line[self.start + 1..self.end - 1]
    }

    /// Whether this is the empty string.
    pub fn is_empty_str(&self) -> bool {
        self.kind == Kind::Str && self.end - self.start == 2
    }
}

/// Bytes a string scan must look at: quote, backslash, control characters, non-ASCII.
const fn stop_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut c = 0;
    while c < 256 {
        table[c] = c == b'"' as usize || c == b'\\' as usize || c < 0x20 || c >= 0x80;
        c += 1;
    }
    table
}
static STRING_STOP: [bool; 256] = stop_table();

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The first byte at or after `p` that a string scan must look at, eight bytes a step.
///
/// Bit tricks on a word find bytes equal to `"` or `\`, below 0x20, or at least 0x80; a borrow
/// can only mark bytes after a true hit, so the lowest mark is exact.
fn next_stop(line: &[u8], mut p: usize) -> usize {
    while p + 8 <= line.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&line[p..p + 8]);
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let marks = (w & HIGHS)
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS)
            | (quote.wrapping_sub(ONES) & !quote & HIGHS)
            | (backslash.wrapping_sub(ONES) & !backslash & HIGHS);
        if marks != 0 {
            return p + (marks.trailing_zeros() / 8) as usize;
        }
        p += 8;
    }
    while p < line.len() && !STRING_STOP[line[p] as usize] {
        p += 1;
    }
    p
}

/// One UTF-8 sequence starting at a byte >= 0x80: its code point and length, or None when it is
/// not valid UTF-8 (overlong, surrogate, beyond U+10FFFF, cut short).
pub fn utf8_at(line: &[u8], p: usize) -> Option<(u32, usize)> {
    let c = line[p];
    let cont = |i: usize| {
        line.get(p + i)
            .filter(|b| *b & 0xC0 == 0x80)
            .map(|b| u32::from(b & 0x3F))
    };
    match c {
        0xC2..=0xDF => Some(((u32::from(c & 0x1F) << 6) | cont(1)?, 2)),
        0xE0..=0xEF => {
            let cp = (u32::from(c & 0x0F) << 12) | (cont(1)? << 6) | cont(2)?;
            (cp >= 0x800 && !(0xD800..=0xDFFF).contains(&cp)).then_some((cp, 3))
        }
        0xF0..=0xF4 => {
            let cp = (u32::from(c & 0x07) << 18) | (cont(1)? << 12) | (cont(2)? << 6) | cont(3)?;
            ((0x10000..=0x10FFFF).contains(&cp)).then_some((cp, 4))
        }
        _ => None,
    }
}

pub fn hex4(digits: &[u8]) -> Option<u32> {
    if digits.len() < 4 {
        return None;
    }
    digits[..4].iter().try_fold(0u32, |value, c| {
        Some((value << 4) | (*c as char).to_digit(16)?)
    })
}

/// The seed estimate's weight of one non-ASCII character, in tenths of a token.
pub trait Weights {
    fn weight(&mut self, code_point: u32) -> Scanned<u32>;
}

/// One line being scanned, and the inventory of its strings' non-ASCII characters.
pub struct Scan<'a, W: Weights> {
    pub line: &'a [u8],
    pub p: usize,
    pub max_depth: usize,
    pub weights: &'a mut W,
    pub nonascii_bytes: i64,
    pub nonascii_chars: i64,
    pub tenths: i64,
}

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl<'a, W: Weights> Scan<'a, W> {
    pub fn new(line: &'a [u8], max_depth: usize, weights: &'a mut W) -> Self {
        Scan {
            line,
            p: 0,
            max_depth,
            weights,
            nonascii_bytes: 0,
            nonascii_chars: 0,
            tenths: 0,
        }
    }

    pub fn at_end(&self) -> bool {
        self.p >= self.line.len()
    }

    /// The byte at the cursor, if any.
    pub fn peek(&self) -> Option<u8> {
        self.line.get(self.p).copied()
    }

    fn skip_ws(&mut self) {
        while self.p < self.line.len() && is_ws(self.line[self.p]) {
            self.p += 1;
        }
    }

    /// A string at the cursor (its opening quote), counting its raw non-ASCII characters.
    pub fn string(&mut self) -> Scanned<Val> {
        let line = self.line;
        let mut v = Val {
            start: self.p,
            kind: Kind::Str,
            ..Val::default()
        };
        let mut p = self.p + 1;
        loop {
            p = next_stop(line, p);
            let c = *line.get(p).ok_or(Stop::Fallback)?;
            match c {
                b'"' => break,
                b'\\' => {
                    v.escaped = true;
                    match line.get(p + 1).ok_or(Stop::Fallback)? {
                        b'u' => {
                            let u = hex4(line.get(p + 2..).unwrap_or(&[])).ok_or(Stop::Fallback)?;
                            if (0xD800..=0xDFFF).contains(&u) {
                                return Err(Stop::Fallback); // surrogates: the reference reads them
                            }
                            v.unicode_escape = true;
                            p += 6;
                        }
                        b'/' => {
                            v.unicode_escape = true;
                            p += 2;
                        }
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => p += 2,
                        _ => return Err(Stop::Fallback),
                    }
                }
                0..=0x1F => return Err(Stop::Fallback),
                _ => {
                    let (cp, len) = utf8_at(line, p).ok_or(Stop::Fallback)?;
                    self.tenths += i64::from(self.weights.weight(cp)?);
                    self.nonascii_chars += 1;
                    self.nonascii_bytes += len as i64;
                    p += len;
                }
            }
        }
        self.p = p + 1;
        v.end = self.p;
        Ok(v)
    }

    fn number(&mut self) -> Scanned<Val> {
        let line = self.line;
        let start = self.p;
        let mut p = start;
        let digit = |p: usize| line.get(p).is_some_and(u8::is_ascii_digit);
        let digits = |mut p: usize| {
            while digit(p) {
                p += 1;
            }
            p
        };
        if line.get(p) == Some(&b'-') {
            p += 1;
        }
        match line.get(p) {
            Some(b'0') => p += 1,
            Some(b'1'..=b'9') => p = digits(p),
            _ => return Err(Stop::Fallback),
        }
        if line.get(p) == Some(&b'.') {
            if !digit(p + 1) {
                return Err(Stop::Fallback);
            }
            p = digits(p + 1);
        }
        if matches!(line.get(p), Some(b'e' | b'E')) {
            p += 1;
            if matches!(line.get(p), Some(b'+' | b'-')) {
                p += 1;
            }
            if !digit(p) {
                return Err(Stop::Fallback);
            }
            p = digits(p);
        }
        self.p = p;
        Ok(Val {
            start,
            end: p,
            kind: Kind::Number,
            ..Val::default()
        })
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Scanned<Val> {
        if !self.line[self.p..].starts_with(word) {
            return Err(Stop::Fallback);
        }
        let start = self.p;
        self.p += word.len();
        Ok(Val {
            start,
            end: self.p,
            kind,
            ..Val::default()
        })
    }

    /// Opens the container at the cursor: true when it is empty (and closed).
    fn open(&mut self, depth: usize, close: u8) -> Scanned<bool> {
        if depth > self.max_depth {
            return Err(Stop::Fallback); // deeper nesting: the reference's limit decides
        }
        self.p += 1;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.p += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// After an item: false when another follows, true when the container closed.
    fn next_item(&mut self, close: u8) -> Scanned<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.p += 1;
                self.skip_ws();
                Ok(false)
            }
            Some(c) if c == close => {
                self.p += 1;
                Ok(true)
            }
            _ => Err(Stop::Fallback),
        }
    }

    /// An object at the cursor; `member` sees each key and scans its value itself.
    pub fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Val, usize) -> Scanned<()>,
    ) -> Scanned<Val> {
        let start = self.p;
        let mut closed = self.open(depth, b'}')?;
        while !closed {
            if self.peek() != Some(b'"') {
                return Err(Stop::Fallback);
            }
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(Stop::Fallback);
            }
            self.p += 1;
            self.skip_ws();
            member(self, key, depth)?;
            closed = self.next_item(b'}')?;
        }
        Ok(Val {
            start,
            end: self.p,
            kind: Kind::Object,
            ..Val::default()
        })
    }

    /// An array at the cursor; `item` scans each item.
    pub fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self, usize) -> Scanned<()>,
    ) -> Scanned<Val> {
        let start = self.p;
        let mut closed = self.open(depth, b']')?;
        while !closed {
            item(self, depth)?;
            closed = self.next_item(b']')?;
        }
        Ok(Val {
            start,
            end: self.p,
            kind: Kind::Array,
            ..Val::default()
        })
    }

    /// Any value at the cursor, validated and skipped.
    pub fn value(&mut self, depth: usize) -> Scanned<Val> {
        match self.peek().ok_or(Stop::Fallback)? {
            b'"' => self.string(),
            b'{' => self.object(depth, |scan, _key, depth| scan.value(depth + 1).map(drop)),
            b'[' => self.array(depth, |scan, depth| scan.value(depth + 1).map(drop)),
            b't' => self.literal(b"true", Kind::True),
            b'f' => self.literal(b"false", Kind::False),
            b'n' => self.literal(b"null", Kind::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Stop::Fallback),
        }
    }
}
