//! Commitments (capacity blocks, reservations, committed use): how much to commit to.
//! Today: [`sizing`], the floor and the optimum of a demand history, pure computation.

pub mod sizing;

pub use sizing::{Commitment, Sizing, SizingError, SizingInput, parse_csv, size};
