//! The members of a Claude Code record that the index keeps, located (not decoded) in one scan.
//!
//! Types are checked as the reference's msgspec schema checks them (`TypedHead`); a member of
//! another type, a duplicate member or an escaped key sends the line to the reference.

use crate::json::{Kind, Scan, Scanned, Stop, Val, Weights};

/// The top-level members kept, in the order of `KEYS`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Type,
    Subtype,
    Uuid,
    Parent,
    LogicalParent,
    Session,
    Sidechain,
    Timestamp,
    Cwd,
    Version,
    CompactSummary,
    Meta,
    SourceTool,
    Leaf,
    Explicit,
    LastPrompt,
    MessageId,
    AgentId,
    Cost,
    Message,
    Attachment,
    Content,
    Error,
    CompactMetadata,
}

pub const KEY_COUNT: usize = 24;
pub const KEYS: [(&str, Key); KEY_COUNT] = [
    ("type", Key::Type),
    ("subtype", Key::Subtype),
    ("uuid", Key::Uuid),
    ("parentUuid", Key::Parent),
    ("logicalParentUuid", Key::LogicalParent),
    ("sessionId", Key::Session),
    ("isSidechain", Key::Sidechain),
    ("timestamp", Key::Timestamp),
    ("cwd", Key::Cwd),
    ("version", Key::Version),
    ("isCompactSummary", Key::CompactSummary),
    ("isMeta", Key::Meta),
    ("sourceToolAssistantUUID", Key::SourceTool),
    ("leafUuid", Key::Leaf),
    ("explicit", Key::Explicit),
    ("lastPrompt", Key::LastPrompt),
    ("messageId", Key::MessageId),
    ("agentId", Key::AgentId),
    ("costUSD", Key::Cost),
    ("message", Key::Message),
    ("attachment", Key::Attachment),
    ("content", Key::Content),
    ("error", Key::Error),
    ("compactMetadata", Key::CompactMetadata),
];

/// A message with more blocks goes to the reference.
const MAX_BLOCKS_KEPT: usize = 4096;

/// The members of one content block that the index reads.
#[derive(Default, Clone, Copy)]
pub struct BlockVals {
    pub kind: Val,
    pub id: Val,
    pub tool_use_id: Val,
    pub tool_use_id_camel: Val,
    pub text: Val,
}

#[derive(Default)]
pub struct MessageVals {
    pub id: Val,
    pub role: Val,
    pub content: Val,
    pub blocks: Vec<BlockVals>,
}

/// Where the kept members of one record are.
#[derive(Default)]
pub struct Head {
    pub vals: [Val; KEY_COUNT],
    pub message: MessageVals,
    pub attachment_tool: Val,
}

impl Head {
    pub fn get(&self, key: Key) -> &Val {
        &self.vals[key as usize]
    }
}

fn key_text<'l>(line: &'l [u8], key: &Val) -> Scanned<&'l [u8]> {
    if key.escaped {
        return Err(Stop::Fallback); // an escaped key may spell a kept one: the reference reads it
    }
    Ok(key.inner(line))
}

/// An `Any` member msgspec would make a Python value of: only strings, null and booleans are
/// decided here (numbers, arrays and objects go to the reference).
fn any_scalar<W: Weights>(scan: &mut Scan<W>, slot: &mut Val, depth: usize) -> Scanned<()> {
    if slot.kind != Kind::Absent {
        return Err(Stop::Fallback); // a duplicate member
    }
    *slot = scan.value(depth + 1)?;
    match slot.kind {
        Kind::Number | Kind::Array | Kind::Object => Err(Stop::Fallback),
        _ => Ok(()),
    }
}

fn block<W: Weights>(scan: &mut Scan<W>, blocks: &mut Vec<BlockVals>, depth: usize) -> Scanned<()> {
    if scan.peek() != Some(b'{') || blocks.len() >= MAX_BLOCKS_KEPT {
        return Err(Stop::Fallback); // not a block object, or too many blocks
    }
    let mut b = BlockVals::default();
    scan.object(depth + 1, |scan, key, depth| {
        match key_text(scan.line, &key)? {
            b"type" => any_scalar(scan, &mut b.kind, depth),
            b"id" => any_scalar(scan, &mut b.id, depth),
            b"tool_use_id" => any_scalar(scan, &mut b.tool_use_id, depth),
            b"toolUseID" => any_scalar(scan, &mut b.tool_use_id_camel, depth),
            b"text" => {
                if b.text.kind != Kind::Absent {
                    return Err(Stop::Fallback);
                }
                b.text = scan.value(depth + 1)?; // any value, kept raw
                Ok(())
            }
            _ => scan.value(depth + 1).map(drop),
        }
    })?;
    blocks.push(b);
    Ok(())
}

fn message<W: Weights>(scan: &mut Scan<W>, m: &mut MessageVals, depth: usize) -> Scanned<Val> {
    scan.object(depth + 1, |scan, key, depth| {
        match key_text(scan.line, &key)? {
            b"id" => any_scalar(scan, &mut m.id, depth),
            b"role" => any_scalar(scan, &mut m.role, depth),
            b"content" => {
                if m.content.kind != Kind::Absent {
                    return Err(Stop::Fallback);
                }
                if scan.peek() == Some(b'[') {
                    let blocks = &mut m.blocks;
                    m.content = scan.array(depth + 1, |scan, depth| block(scan, blocks, depth))?;
                    return Ok(());
                }
                m.content = scan.value(depth + 1)?;
                match m.content.kind {
                    Kind::Str | Kind::Null => Ok(()),
                    _ => Err(Stop::Fallback),
                }
            }
            _ => scan.value(depth + 1).map(drop),
        }
    })
}

fn attachment<W: Weights>(scan: &mut Scan<W>, tool: &mut Val, depth: usize) -> Scanned<Val> {
    scan.object(depth + 1, |scan, key, depth| {
        match key_text(scan.line, &key)? {
            b"toolUseID" => any_scalar(scan, tool, depth),
            _ => scan.value(depth + 1).map(drop),
        }
    })
}

/// Whether a kept member's value has a type the schema allows there.
fn allowed(key: Key, kind: Kind) -> bool {
    match key {
        Key::Message => matches!(kind, Kind::Object | Kind::Null),
        Key::Attachment | Key::Content | Key::Error | Key::CompactMetadata => true,
        Key::Sidechain | Key::CompactSummary | Key::Meta | Key::Explicit => {
            matches!(kind, Kind::True | Kind::False | Kind::Null)
        }
        Key::Cost => matches!(kind, Kind::Number | Kind::Null),
        _ => matches!(kind, Kind::Str | Kind::Null), // str | None
    }
}

/// Scans a whole record line (an object from its first byte to its last) into its `Head`.
pub fn scan_head<W: Weights>(scan: &mut Scan<W>) -> Scanned<Head> {
    if scan.peek() != Some(b'{') {
        return Err(Stop::Fallback); // not an object: the reference names what it is
    }
    let mut h = Head::default();
    scan.object(1, |scan, key, depth| {
        let name = key_text(scan.line, &key)?;
        // length and first byte before the bytes: most members are not kept ones
        let kept = KEYS.iter().find(|(known, _)| {
            let known = known.as_bytes();
            known.len() == name.len() && known.first() == name.first() && known == name
        });
        let Some((_, k)) = kept else {
            return scan.value(depth + 1).map(drop);
        };
        let k = *k;
        if h.vals[k as usize].kind != Kind::Absent {
            return Err(Stop::Fallback); // a duplicate member
        }
        let opening = scan.peek().ok_or(Stop::Fallback)?;
        let v = match (k, opening) {
            (Key::Message, b'{') => message(scan, &mut h.message, depth)?,
            (Key::Attachment, b'{') => attachment(scan, &mut h.attachment_tool, depth)?,
            _ => scan.value(depth + 1)?,
        };
        if !allowed(k, v.kind) {
            return Err(Stop::Fallback);
        }
        h.vals[k as usize] = v;
        Ok(())
    })?;
    if !scan.at_end() {
        return Err(Stop::Fallback); // bytes after the object
    }
    Ok(h)
}
