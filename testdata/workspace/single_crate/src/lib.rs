//! Fixture crate for cargo-agents' workspace tests.

pub fn answer() -> u32 {
    42
}
