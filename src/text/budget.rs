//! The answer budget: how long one answer may be, counted the way the
//! client counts it, and how to fit line-shaped answers into it.
//!
//! Clients cut long tool answers on their own, and not honestly for us:
//! Gemini CLI keeps the first 20% and the last 80% of a single text block
//! longer than 40,000 characters (after wrapping it in
//! `<untrusted_context>` tags), so a note at the top that says "lines
//! 1-2000" would sit above a hole the model never hears about. Claude Code
//! refuses answers over 25,000 tokens. An answer that fits the budget is
//! never cut by them; an answer we cut ourselves says exactly where it
//! stopped and how to go on.
//!
//! Lengths are counted as JavaScript counts them (UTF-16 code units), plus
//! what Gemini CLI's wrapper adds when it escapes a closing
//! `</untrusted_context>` inside the text.

/// The default budget, in client characters: under Gemini CLI's 40,000,
/// with room for its wrapper (41 characters).
pub const DEFAULT_ANSWER_BUDGET: usize = 39_000;

/// The closing tag Gemini CLI escapes inside a wrapped answer, growing it
/// by six characters each time (`<` and `>` become `&lt;` and `&gt;`).
const WRAPPER_CLOSE: &str = "</untrusted_context>";

/// How long one answer may be, or no limit (`--answer-budget off`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerBudget(Option<usize>);

impl Default for AnswerBudget {
    fn default() -> Self {
        AnswerBudget(Some(DEFAULT_ANSWER_BUDGET))
    }
}

impl AnswerBudget {
    /// No limit: answers are as long as the tools make them.
    pub const OFF: AnswerBudget = AnswerBudget(None);

    /// A budget of `chars` client characters.
    pub fn chars(chars: usize) -> AnswerBudget {
        AnswerBudget(Some(chars))
    }

    /// The limit, if there is one.
    pub fn limit(self) -> Option<usize> {
        self.0
    }

    /// The limit, or `otherwise` when there is none.
    pub fn limit_or(self, otherwise: usize) -> usize {
        self.0.unwrap_or(otherwise)
    }

    /// Whether `text` fits.
    pub fn fits(self, text: &str) -> bool {
        self.0.is_none_or(|limit| client_len(text) <= limit)
    }
}

/// The length of `text` as Gemini CLI measures it after wrapping: UTF-16
/// code units, plus six for each closing tag its wrapper escapes.
pub fn client_len(text: &str) -> usize {
    let units: usize = text.chars().map(char::len_utf16).sum();
    units + 6 * text.matches(WRAPPER_CLOSE).count()
}

/// An answer made of a head, items one per line, and a tail: the items that
/// fit are kept, in order, and when some are left out (or `more` were never
/// given) `cut_note(shown)` says so on the line after the last one kept.
pub struct Listing<'a> {
    pub head: &'a str,
    pub items: &'a [&'a str],
    /// Items that exist beyond `items` but were not gathered.
    pub more: usize,
    pub tail: &'a str,
}

impl Listing<'_> {
    /// `head`, then `\n` and an item for each item that fits, then (if
    /// some did not) `\n` and the note, then `tail`. At least one item is
    /// kept when there is any, so that following the notes always moves
    /// on; without a limit every item is kept.
    ///
    /// `cut_note` gets the number of items shown. Its length is bounded by
    /// its lengths at none and at all items shown (counts differ only in
    /// digits, and a note may say more when the budget cut the list).
    pub fn fit(&self, budget: AnswerBudget, cut_note: impl Fn(usize) -> String) -> String {
        let shown = self.items_that_fit(budget, &cut_note);
        self.render(shown, cut_note)
    }

    /// The answer with the first `shown` items (see [`Listing::fit`]).
    pub fn render(&self, shown: usize, cut_note: impl Fn(usize) -> String) -> String {
        let shown = shown.min(self.items.len());
        let mut out = String::from(self.head);
        for item in &self.items[..shown] {
            out.push('\n');
            out.push_str(item);
        }
        if shown < self.items.len() || self.more > 0 {
            out.push('\n');
            out.push_str(&cut_note(shown));
        }
        out.push_str(self.tail);
        out
    }

    /// How many items [`Listing::fit`] keeps.
    pub fn items_that_fit(
        &self,
        budget: AnswerBudget,
        cut_note: impl Fn(usize) -> String,
    ) -> usize {
        let Some(limit) = budget.limit() else {
            return self.items.len();
        };
        let note = client_len(&cut_note(0)).max(client_len(&cut_note(self.items.len()))) + 1;
        let fixed = client_len(self.head) + client_len(self.tail);
        let all: usize = self.items.iter().map(|i| client_len(i) + 1).sum();
        let due = if self.more > 0 { note } else { 0 };
        if fixed + all + due <= limit {
            return self.items.len();
        }
        let room = limit.saturating_sub(fixed + note);
        let mut used = 0;
        let mut shown = 0;
        for item in self.items {
            let cost = client_len(item) + 1;
            if used + cost > room {
                break;
            }
            used += cost;
            shown += 1;
        }
        shown.max(1).min(self.items.len())
    }
}

/// The longest prefix of whole lines of `text` (each with its `\n`) whose
/// client length is at most `room`, as a byte length; at least the first
/// line, so that a cut always shows something.
pub fn whole_lines_within(text: &str, room: usize) -> usize {
    let mut used = 0;
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        let cost = client_len(line);
        if used + cost > room && end > 0 {
            break;
        }
        used += cost;
        end += line.len();
        if used > room {
            break;
        }
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_counts_utf16_units_and_escaped_closing_tags() {
        assert_eq!(client_len("abc"), 3);
        assert_eq!(client_len("é"), 1);
        // Outside the basic plane: two units, as JavaScript counts.
        assert_eq!(client_len("😀"), 2);
        assert_eq!(
            client_len("x</untrusted_context>"),
            1 + WRAPPER_CLOSE.len() + 6
        );
    }

    fn items(n: usize, width: usize) -> Vec<String> {
        (0..n).map(|i| format!("{i:0width$}")).collect()
    }

    #[test]
    fn a_listing_that_fits_is_whole_and_one_that_does_not_ends_in_its_note() {
        let owned = items(100, 9);
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        let listing = Listing {
            head: "head:",
            items: &refs,
            more: 0,
            tail: "\n\ntail",
        };
        let note = |shown: usize| format!("... {} more", 100 - shown);
        let whole = listing.fit(AnswerBudget::OFF, note);
        assert_eq!(whole.lines().count(), 1 + 100 + 2);
        assert_eq!(listing.fit(AnswerBudget::chars(10_000), note), whole);
        for limit in [40, 100, 333, 999] {
            let cut = listing.fit(AnswerBudget::chars(limit), note);
            assert!(client_len(&cut) <= limit, "{limit}: {cut}");
            let shown = cut.lines().count() - 1 - 1 - 2;
            assert!(cut.contains(&format!("... {} more", 100 - shown)), "{cut}");
            // One more item (ten characters with its line break) would not
            // have fitted beside the longest note ("... 100 more").
            assert!(client_len(&cut) + 10 + 13 > limit, "{limit}: {cut}");
            assert!(cut.ends_with("\n\ntail"));
        }
    }

    #[test]
    fn a_listing_keeps_one_item_even_over_the_budget() {
        let refs = ["a very long item indeed", "b"];
        let listing = Listing {
            head: "h",
            items: &refs,
            more: 0,
            tail: "",
        };
        let cut = listing.fit(AnswerBudget::chars(5), |_| "cut".to_string());
        assert_eq!(cut, "h\na very long item indeed\ncut");
    }

    #[test]
    fn whole_lines_stop_before_the_line_that_does_not_fit() {
        let text = "aa\nbb\ncc\n";
        assert_eq!(whole_lines_within(text, 6), 6);
        assert_eq!(whole_lines_within(text, 8), 6);
        assert_eq!(whole_lines_within(text, 9), 9);
        // The first line is kept even when it alone is too long.
        assert_eq!(whole_lines_within(text, 1), 3);
    }
}
