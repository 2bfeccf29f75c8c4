//! The first `n` items of a stream, in order, in memory bounded by `2n`:
//! what an answer that shows only its first entries keeps of a walk or a
//! listing of any size.
//!
//! Kept items gather in a buffer of twice `n`; when it fills, the first
//! half is selected and the rest dropped, and the last kept becomes the bar
//! a new item must beat. A walk often meets items in falling order (a
//! depth-first walk ends in the early directories), where a heap would
//! re-sort on nearly every item; here most items cost one comparison and
//! the kept ones a few, amortised. The caller compares a candidate with the
//! bar before it builds the item, so what is not kept is never copied.

/// The first `n` items offered, by their order.
#[derive(Debug)]
pub struct FirstN<T> {
    n: usize,
    kept: Vec<T>,
    /// Whether `kept[n - 1]` is the bar: the last of the first `n` at the
    /// latest pruning (those after it came since).
    has_bar: bool,
}

impl<T: Ord> FirstN<T> {
    /// Keeps the first `n` (at least one).
    pub fn new(n: usize) -> FirstN<T> {
        FirstN {
            n: n.max(1),
            kept: Vec::new(),
            has_bar: false,
        }
    }

    /// Whether a candidate may be among the first, given how it orders
    /// against the bar (`against_bar(bar)`: the candidate's order relative
    /// to it). False once it does not come before the bar.
    pub fn may_keep(&self, against_bar: impl FnOnce(&T) -> std::cmp::Ordering) -> bool {
        !self.has_bar || against_bar(&self.kept[self.n - 1]).is_lt()
    }

    /// Keeps `item` (asked of [`FirstN::may_keep`] first).
    pub fn push(&mut self, item: T) {
        self.kept.push(item);
        if self.kept.len() >= 2 * self.n {
            self.prune();
        }
    }

    /// Keeps only the first `n`, the last of them at the bar.
    fn prune(&mut self) {
        if self.kept.len() >= self.n {
            self.kept.select_nth_unstable(self.n - 1);
            self.kept.truncate(self.n);
            self.has_bar = true;
        }
    }

    /// What is kept, in no order (to merge into another).
    pub fn into_kept(self) -> Vec<T> {
        self.kept
    }

    /// The first `n`, in order.
    pub fn into_sorted(mut self) -> Vec<T> {
        self.prune();
        self.kept.sort_unstable();
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_n_of_any_order_are_kept_in_order() {
        let mut state = 0x9e37_79b9_u32;
        let items: Vec<u32> = (0..5000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state % 3000
            })
            .collect();
        let falling: Vec<u32> = (0..5000).rev().collect();
        for stream in [items, falling] {
            let mut sorted = stream.clone();
            sorted.sort_unstable();
            for n in [1, 2, 7, 100, 4999, 6000] {
                let mut first = FirstN::new(n);
                for &item in &stream {
                    if first.may_keep(|bar| item.cmp(bar)) {
                        first.push(item);
                    }
                }
                assert_eq!(first.into_sorted(), sorted[..n.min(sorted.len())], "{n}");
            }
        }
    }
}
