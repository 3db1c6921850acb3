//! A seeded xorshift generator for the property tests: the same draws on every run, with
//! no dependency.

/// Xorshift64 from a fixed seed.
pub(crate) struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (not zero).
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A draw in `0..bound`.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        (self.next_u64() % bound as u64) as usize
    }

    /// A uniform draw in `[0, 1)`.
    pub(crate) fn uniform(&mut self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "53 bits, exact in an f64")]
        let x = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        x
    }
}
