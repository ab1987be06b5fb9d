//! Strings out of scanned values: unescaping, comparing, and sharing the texts most lines repeat.

use crate::json::{hex4, Kind, Val};

/// A string value's text as UTF-8 bytes, its escapes undone (the scan validated them and refused
/// surrogate escapes, so every `\u` is one whole character).
pub fn unescape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut p = 0;
    while p < raw.len() {
        if raw[p] != b'\\' {
            out.push(raw[p]);
            p += 1;
            continue;
        }
        let e = raw[p + 1];
        p += 2;
        match e {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0C),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'u' => {
                let code = hex4(&raw[p..])
                    .and_then(char::from_u32)
                    .unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut buf = [0u8; 4];
                out.extend_from_slice(code.encode_utf8(&mut buf).as_bytes());
                p += 4;
            }
            other => out.push(other), // " \ /
        }
    }
    out
}

/// The text of a string value, borrowed where it has no escapes.
pub fn text_bytes<'l>(line: &'l [u8], v: &Val) -> std::borrow::Cow<'l, [u8]> {
    let raw = v.inner(line);
    if v.escaped {
        std::borrow::Cow::Owned(unescape(raw))
    } else {
        std::borrow::Cow::Borrowed(raw)
    }
}

/// Whether a value is the string `name` (after unescaping).
pub fn equals(line: &[u8], v: &Val, name: &str) -> bool {
    v.kind == Kind::Str && text_bytes(line, v).as_ref() == name.as_bytes()
}

/// How many recent uuids and tool ids a line's references are looked up among.
pub const RING: usize = 64;

/// Texts kept from the lines before so that equal values share one Python object: every line
/// carries the session's id and version, a parent is mostly one of the last records' uuids, a
/// tool result names a recent call's id. A cache only: a text not found is made anew.
pub struct Ring<T> {
    items: Vec<(Vec<u8>, T)>,
    capacity: usize,
    next: usize,
}

impl<T> Ring<T> {
    pub fn new(capacity: usize) -> Self {
        Ring {
            items: Vec::with_capacity(capacity),
            capacity,
            next: 0,
        }
    }

    /// The object kept for this raw (unescaped) text, if any; the newest first, as a parent is
    /// mostly the record just before.
    pub fn find(&self, raw: &[u8]) -> Option<&T> {
        let (recent, oldest) = self.items.split_at(self.next.min(self.items.len()));
        recent
            .iter()
            .rev()
            .chain(oldest.iter().rev())
            .find(|(known, _)| known.as_slice() == raw)
            .map(|(_, obj)| obj)
    }

    pub fn push(&mut self, raw: &[u8], obj: T) {
        let newest = (self.next + self.capacity - 1) % self.capacity;
        if raw.is_empty()
            || self
                .items
                .get(newest)
                .is_some_and(|(known, _)| known.as_slice() == raw)
        {
            return; // nothing to share, or kept already
        }
        if self.items.len() < self.capacity {
            self.items.push((raw.to_vec(), obj));
        } else {
            self.items[self.next] = (raw.to_vec(), obj);
        }
        self.next = (self.next + 1) % self.capacity;
    }
}
