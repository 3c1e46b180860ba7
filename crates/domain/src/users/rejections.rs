//! The problems of an uploaded CSV file, gathered as it is read: the first ones listed one by
//! one, every one counted under its reason, and how many rows they are (a row may have several
//! problems). What an operator reads is the reasons: "3,334 rows: role "eng" does not exist
//! (rows 2, 5, 9, …)", not 3,334 lines. Memory stays bounded whatever the file holds.

use std::collections::HashMap;

use latchkey::admin::{RejectedReason, RejectedRow};

/// Problems listed one by one at most; beyond, only counted (in their reasons).
const LISTED_MAX: usize = 10_000;
/// Distinct reasons kept at most (a reason that names the bad value is one per row); the
/// problems of any further reason are counted in one last entry.
const REASONS_MAX: usize = 1_000;
/// Row numbers kept per reason.
const FIRST_ROWS: usize = 5;

/// The column of the entry that counts the problems past [`REASONS_MAX`].
const OTHER: &str = "file";

#[derive(Debug, Default)]
pub struct Rejections {
    listed: Vec<RejectedRow>,
    problems: u64,
    rows: u64,
    last_row: Option<u64>,
    reasons: Vec<RejectedReason>,
    index: HashMap<(String, String), usize>,
    others: Option<RejectedReason>,
}

impl Rejections {
    pub fn add(&mut self, problem: RejectedRow) {
        self.problems += 1;
        // A row's problems arrive together; the header's and the file's (a row limit) are not a
        // row's.
        let of_a_row = !matches!(problem.column.as_str(), "file" | "header");
        if of_a_row && self.last_row != Some(problem.row) {
            self.rows += 1;
            self.last_row = Some(problem.row);
        }
        let key = (problem.column.clone(), problem.reason.clone());
        let group = match self.index.get(&key) {
            Some(&i) => Some(&mut self.reasons[i]),
            None if self.reasons.len() < REASONS_MAX => {
                self.index.insert(key, self.reasons.len());
                self.reasons.push(RejectedReason {
                    column: problem.column.clone(),
                    reason: problem.reason.clone(),
                    rows: 0,
                    first_rows: vec![],
                });
                self.reasons.last_mut()
            }
            None => None,
        };
        let group = group.unwrap_or_else(|| {
            self.others.get_or_insert_with(|| RejectedReason {
                column: OTHER.into(),
                reason: format!("other reasons (only the first {REASONS_MAX} distinct reasons are told apart)"),
                rows: 0,
                first_rows: vec![],
            })
        });
        group.rows += 1;
        if group.first_rows.len() < FIRST_ROWS && group.first_rows.last() != Some(&problem.row) {
            group.first_rows.push(problem.row);
        }
        if self.listed.len() < LISTED_MAX {
            self.listed.push(problem);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.problems == 0
    }

    /// Rows rejected, each counted once.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Problems found (a row may have several).
    pub fn problems(&self) -> u64 {
        self.problems
    }

    /// The first problems one by one (all of them up to 10,000, then a last entry, row 0,
    /// saying how many more there are), and every problem grouped by reason.
    pub fn into_parts(self) -> (Vec<RejectedRow>, Vec<RejectedReason>) {
        let mut listed = self.listed;
        let more = self.problems - listed.len() as u64;
        if more > 0 {
            listed.push(RejectedRow {
                row: 0,
                column: "file".into(),
                reason: format!("{more} more problem(s) are not listed; their reasons are counted"),
            });
        }
        let mut reasons = self.reasons;
        reasons.extend(self.others);
        (listed, reasons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(row: u64, column: &str, reason: &str) -> RejectedRow {
        RejectedRow { row, column: column.into(), reason: reason.into() }
    }

    #[test]
    fn identical_reasons_are_counted_once_with_their_first_rows() {
        let mut r = Rejections::default();
        for row in 2..3336 {
            r.add(problem(row, "roles", "role \"eng\" does not exist"));
            if row == 7 {
                r.add(problem(row, "email", "\"x@\" is not an e-mail address"));
            }
        }
        assert_eq!((r.rows(), r.problems()), (3334, 3335), "row 7 has two problems, counted as one row");
        let (listed, reasons) = r.into_parts();
        assert_eq!(listed.len(), 3335);
        assert_eq!(reasons.len(), 2);
        assert_eq!((reasons[0].rows, reasons[0].first_rows.clone()), (3334, vec![2, 3, 4, 5, 6]));
        assert_eq!((reasons[1].column.as_str(), reasons[1].rows, reasons[1].first_rows.clone()), ("email", 1, vec![7]));
    }

    #[test]
    fn memory_is_bounded_and_nothing_goes_uncounted() {
        let mut r = Rejections::default();
        for row in 2..(LISTED_MAX as u64 + 2_002) {
            r.add(problem(row, "email", &format!("\"{row}\" is not an e-mail address")));
        }
        let total = r.problems();
        let (listed, reasons) = r.into_parts();
        assert_eq!(listed.len(), LISTED_MAX + 1);
        assert_eq!(listed[LISTED_MAX].row, 0);
        assert!(listed[LISTED_MAX].reason.starts_with("2000 more problem(s)"), "{}", listed[LISTED_MAX].reason);
        assert_eq!(reasons.len(), REASONS_MAX + 1);
        assert_eq!(reasons.iter().map(|g| g.rows).sum::<u64>(), total);
        assert_eq!(reasons[REASONS_MAX].first_rows.len(), FIRST_ROWS);
    }

    #[test]
    fn the_files_problems_are_not_rows() {
        let mut r = Rejections::default();
        r.add(problem(1, "header", "the header must be email,name"));
        r.add(problem(7, "file", "more than 5 rows (limits.invite_rows_max)"));
        assert_eq!((r.rows(), r.problems()), (0, 2));
    }
}
