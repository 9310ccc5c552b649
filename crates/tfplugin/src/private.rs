//! Private state: the bytes Terraform stores next to a resource's state but never shows,
//! as a JSON object of named, typed entries (serde).
//!
//! ```
//! use tfplugin::private::PrivateState;
//! let mut p = PrivateState::default();
//! p.set("etag", &"abc123").unwrap();
//! let bytes = p.to_bytes();
//! let back = PrivateState::from_bytes(&bytes).unwrap();
//! assert_eq!(back.get::<String>("etag").unwrap(), Some("abc123".to_string()));
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;

/// Why private state could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PrivateStateError {
    /// The stored bytes are not a JSON object (written by something else).
    #[error("private state is not a JSON object: {0}")]
    NotAnObject(#[source] serde_json::Error),
    /// An entry does not decode as the type asked for.
    #[error("private state entry `{key}` does not decode: {source}")]
    Entry {
        /// The entry's name.
        key: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// A value could not be encoded as JSON.
    #[error("private state entry `{key}` does not encode: {source}")]
    Encode {
        /// The entry's name.
        key: String,
        /// The encoding error.
        #[source]
        source: serde_json::Error,
    },
}

/// A resource's private state: named JSON entries, empty when Terraform has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrivateState {
    entries: BTreeMap<String, serde_json::Value>,
}

impl PrivateState {
    /// Reads the bytes Terraform handed over; empty bytes are an empty state.
    pub fn from_bytes(bytes: &[u8]) -> Result<PrivateState, PrivateStateError> {
        if bytes.is_empty() {
            return Ok(PrivateState::default());
        }
        let entries = serde_json::from_slice(bytes).map_err(PrivateStateError::NotAnObject)?;
        Ok(PrivateState { entries })
    }

    /// The bytes to hand back to Terraform (empty when there are no entries).
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        serde_json::to_vec(&self.entries).unwrap_or_default()
    }

    /// The entry `key` decoded as `T`; `None` when absent.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, PrivateStateError> {
        let Some(v) = self.entries.get(key) else {
            return Ok(None);
        };
        T::deserialize(v)
            .map(Some)
            .map_err(|source| PrivateStateError::Entry {
                key: key.to_string(),
                source,
            })
    }

    /// Sets the entry `key` to `value`.
    pub fn set<T: Serialize + ?Sized>(
        &mut self,
        key: &str,
        value: &T,
    ) -> Result<(), PrivateStateError> {
        let v = serde_json::to_value(value).map_err(|source| PrivateStateError::Encode {
            key: key.to_string(),
            source,
        })?;
        self.entries.insert(key.to_string(), v);
        Ok(())
    }

    /// Removes the entry `key`; true when it was there.
    pub fn remove(&mut self, key: &str) -> bool {
        self.entries.remove(key).is_some()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Marker {
        generation: u32,
        token: String,
    }

    #[test]
    fn typed_entries_round_trip_through_bytes() {
        let mut p = PrivateState::from_bytes(&[]).unwrap();
        assert!(p.is_empty() && p.to_bytes().is_empty());
        let m = Marker {
            generation: 3,
            token: "t".into(),
        };
        p.set("marker", &m).unwrap();
        p.set("n", &7u8).unwrap();
        let back = PrivateState::from_bytes(&p.to_bytes()).unwrap();
        assert_eq!(back.get::<Marker>("marker").unwrap(), Some(m));
        assert_eq!(back.get::<u8>("n").unwrap(), Some(7));
        assert_eq!(back.get::<u8>("absent").unwrap(), None);
    }

    #[test]
    fn wrong_shapes_are_errors_naming_the_entry() {
        let mut p = PrivateState::default();
        p.set("n", &"seven").unwrap();
        let e = p.get::<u8>("n").unwrap_err();
        assert!(e.to_string().contains("`n`"), "{e}");
        assert!(matches!(
            PrivateState::from_bytes(b"[1]"),
            Err(PrivateStateError::NotAnObject(_))
        ));
        assert!(p.remove("n") && !p.remove("n") && p.is_empty());
    }
}
