//! Stable names for the explorer's servers and dialogues, and the ordered table that holds
//! them. An id is given once and never again in a run (the counter lives in the table and
//! survives `clear`), so an id kept anywhere (the sidebar's selection, a hit of the last
//! frame, a question that waits for the person) names its item or nothing: every lookup
//! returns an `Option`, and an item closed or removed is really gone, with no tombstone.

use indexmap::IndexMap;
use std::hash::Hash;

/// An id type: a newtype of the table's counter.
pub trait Id: Copy + Eq + Hash + std::fmt::Debug {
    fn from_raw(raw: u64) -> Self;
}

macro_rules! id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(u64);

        impl Id for $name {
            fn from_raw(raw: u64) -> Self {
                $name(raw)
            }
        }
    };
}

id!(
    /// A server of the explorer (its row in the sidebar, the server of its dialogues).
    ServerId
);
id!(
    /// A dialogue tab.
    DialogueId
);

#[cfg(test)]
impl ServerId {
    /// A server for a dialogue built alone in a unit test.
    pub(crate) const TEST: ServerId = ServerId(0);
}

/// Items in the order they are shown, each under an id given when it is added.
#[derive(Debug)]
pub struct Table<I, T> {
    items: IndexMap<I, T>,
    next: u64,
}

impl<I, T> Default for Table<I, T> {
    fn default() -> Self {
        Table {
            items: IndexMap::new(),
            next: 0,
        }
    }
}

impl<I: Id, T> Table<I, T> {
    /// Adds an item at the end, under a new id.
    pub fn push(&mut self, item: T) -> I {
        let id = I::from_raw(self.next);
        self.next += 1;
        self.items.insert(id, item);
        id
    }

    pub fn get(&self, id: I) -> Option<&T> {
        self.items.get(&id)
    }

    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.items.get_mut(&id)
    }

    pub fn contains(&self, id: I) -> bool {
        self.items.contains_key(&id)
    }

    /// Takes an item out; those after it move up (the order shown stays).
    pub fn remove(&mut self, id: I) -> Option<T> {
        self.items.shift_remove(&id)
    }

    /// Takes every item out (ids already given are not given again).
    pub fn clear(&mut self) {
        self.items.clear();
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Where an item is in the order shown.
    pub fn position(&self, id: I) -> Option<usize> {
        self.items.get_index_of(&id)
    }

    /// The id of the item at a place in the order shown.
    pub fn id_at(&self, position: usize) -> Option<I> {
        self.items.get_index(position).map(|(id, _)| *id)
    }

    /// The item at a place in the order shown.
    pub fn nth(&self, position: usize) -> Option<&T> {
        self.items.get_index(position).map(|(_, t)| t)
    }

    pub fn nth_mut(&mut self, position: usize) -> Option<&mut T> {
        self.items.get_index_mut(position).map(|(_, t)| t)
    }

    pub fn first_id(&self) -> Option<I> {
        self.id_at(0)
    }

    pub fn last_id(&self) -> Option<I> {
        self.items.last().map(|(id, _)| *id)
    }

    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + '_ {
        self.items.keys().copied()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + '_ {
        self.items.iter().map(|(id, t)| (*id, t))
    }

    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (I, &mut T)> + '_ {
        self.items.iter_mut().map(|(id, t)| (*id, t))
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.items.values()
    }

    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut T> + '_ {
        self.items.values_mut()
    }

    /// The first id whose item `pred` accepts.
    pub fn find(&self, mut pred: impl FnMut(&T) -> bool) -> Option<I> {
        self.iter().find(|(_, t)| pred(t)).map(|(id, _)| id)
    }

    /// Every item out, in order (the ids stay given).
    pub fn drain(&mut self) -> impl Iterator<Item = (I, T)> + '_ {
        self.items.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_its_item_or_nothing() {
        let mut t: Table<DialogueId, &str> = Table::default();
        let a = t.push("a");
        let b = t.push("b");
        let c = t.push("c");
        assert_eq!(t.remove(b), Some("b"));
        assert_eq!(t.get(b), None, "a removed id names nothing");
        assert_eq!(t.get(c), Some(&"c"), "the others keep their ids");
        assert_eq!(t.position(c), Some(1), "and their order");
        t.clear();
        let d = t.push("d");
        assert_ne!(d, a, "an id is never given twice");
        assert_eq!(t.get(a), None);
    }
}
