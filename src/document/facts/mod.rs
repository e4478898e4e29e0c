//! How a document writes (and reads back) the plain typed facts the lower
//! layers hand up: a device's stack and counters (`device`), a latency
//! summary, a fit, a foreign-I/O finding and a bad block (`analysis`), a
//! worker's intervals, errors and ending (`measure::worker`). Those layers
//! derive no serde; their JSON shape is decided here, once, by serde's
//! remote derive (`#[serde(remote = "...")]`): each `...Def` mirrors its
//! type field for field, so the bytes are what a derive on the type itself
//! wrote (tests/it/json_contract.rs and the golden tests pin them).
//!
//! A document type holds the fact type itself and names its shape on the
//! field: `#[serde(with = "TopologyDef")]`, or, for an optional or repeated
//! one, `with = "Opt::<TopologyDef>"`, `with = "Many::<IntervalDef>"`
//! (serde's remote derive covers a bare field only). Code that writes a
//! field by hand (`run::wire`) wraps it: `TargetKindDef::doc(&kind)`.

use std::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub mod analysis;
pub mod device;
pub mod worker;

pub use analysis::*;
pub use device::*;
pub use worker::*;

/// The shape of `T` in a document: a remote definition (`...Def`) or a
/// container of one ([`Opt`], [`Many`]).
pub trait Shape<T>: Sized {
    fn ser<S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error>;
    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<T, D::Error>;

    /// `v`, serializable in this shape (for a field written by hand).
    fn doc(v: &T) -> Doc<'_, T, Self> {
        Doc(v, PhantomData)
    }
}

/// A fact borrowed in its document shape `R`: what [`Shape::doc`] gives.
pub struct Doc<'a, T, R>(&'a T, PhantomData<R>);

impl<T, R: Shape<T>> Serialize for Doc<'_, T, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        R::ser(self.0, s)
    }
}

/// A fact read back in its document shape `R`.
struct Read<T, R>(T, PhantomData<R>);

impl<'de, T, R: Shape<T>> Deserialize<'de> for Read<T, R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        R::de(d).map(|v| Read(v, PhantomData))
    }
}

/// `Option<T>` in shape `R`: null or `T`'s shape, as serde writes an `Option`.
pub struct Opt<R>(PhantomData<R>);

impl<T, R: Shape<T>> Shape<Option<T>> for Opt<R> {
    fn ser<S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        v.as_ref().map(R::doc).serialize(s)
    }
    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        Ok(Option::<Read<T, R>>::deserialize(d)?.map(|r| r.0))
    }
}

/// `Vec<T>` in shape `R`: an array, as serde writes a `Vec`.
pub struct Many<R>(PhantomData<R>);

impl<T, R: Shape<T>> Shape<Vec<T>> for Many<R> {
    fn ser<S: Serializer>(v: &Vec<T>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(R::doc))
    }
    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
        Ok(Vec::<Read<T, R>>::deserialize(d)?
            .into_iter()
            .map(|r| r.0)
            .collect())
    }
}

/// What `#[serde(with = "Opt::<...>")]` and `with = "Many::<...>"` call.
macro_rules! with_fns {
    ($($c:ident => $of:ident),*) => {$(
        impl<R> $c<R> {
            pub fn serialize<T, S: Serializer>(v: &$of<T>, s: S) -> Result<S::Ok, S::Error>
            where
                R: Shape<T>,
            {
                <Self as Shape<$of<T>>>::ser(v, s)
            }
            pub fn deserialize<'de, T, D: Deserializer<'de>>(d: D) -> Result<$of<T>, D::Error>
            where
                R: Shape<T>,
            {
                <Self as Shape<$of<T>>>::de(d)
            }
        }
    )*};
}
with_fns!(Opt => Option, Many => Vec);

/// `Shape` for the remote definitions: serde's derive gives each an
/// inherent `serialize` and `deserialize`.
macro_rules! shape {
    ($($def:ty => $t:ty),* $(,)?) => {$(
        impl crate::document::facts::Shape<$t> for $def {
            fn ser<S: serde::Serializer>(v: &$t, s: S) -> Result<S::Ok, S::Error> {
                <$def>::serialize(v, s)
            }
            fn de<'de, D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                <$def>::deserialize(d)
            }
        }
    )*};
}
pub(crate) use shape;
