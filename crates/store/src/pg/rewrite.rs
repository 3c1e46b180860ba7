//! The store's SQL is written with SQLite's numbered placeholders (`?1, ?2 …`); PostgreSQL wants
//! `$1, $2 …`. The text is rewritten once per statement (the result is cached with the prepared
//! statement), skipping what is not SQL code: string literals, quoted identifiers and comments.
//! Writing `$N` in the source instead is no option: SQLite numbers `$N` by first appearance.

/// `?N` → `$N` outside `'…'` literals, `"…"` identifiers, `--` and `/* */` comments. A `?`
/// without digits is left alone (PostgreSQL then reports a syntax error that shows it).
pub fn placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // A doubled quote inside a literal ('it''s') closes and reopens it: the same result.
            '\'' | '"' => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == c {
                        break;
                    }
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                out.push(c);
                for d in chars.by_ref() {
                    out.push(d);
                    if d == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                out.push(c);
                // Take the opening `*` first, so that `/*/` does not close the comment.
                if let Some(star) = chars.next() {
                    out.push(star);
                }
                let mut prev = '\0';
                for d in chars.by_ref() {
                    out.push(d);
                    if prev == '*' && d == '/' {
                        break;
                    }
                    prev = d;
                }
            }
            '?' if chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::placeholders;

    #[test]
    fn numbered_placeholders_become_dollars() {
        assert_eq!(
            placeholders("SELECT a FROM t WHERE b = ?1 AND c IN (?2, ?10) LIMIT ?3"),
            "SELECT a FROM t WHERE b = $1 AND c IN ($2, $10) LIMIT $3"
        );
        assert_eq!(placeholders("UPDATE t SET a=?1,b=?2"), "UPDATE t SET a=$1,b=$2");
        assert_eq!(placeholders("CAST(?4 AS TEXT) IS NULL"), "CAST($4 AS TEXT) IS NULL");
    }

    #[test]
    fn literals_identifiers_and_comments_are_kept() {
        assert_eq!(placeholders("SELECT '?1', \"?2\" FROM t WHERE a = ?3"), "SELECT '?1', \"?2\" FROM t WHERE a = $3");
        assert_eq!(placeholders("SELECT 'it''s ?1' WHERE a = ?2"), "SELECT 'it''s ?1' WHERE a = $2");
        assert_eq!(placeholders("SELECT 1 -- why ?1\nWHERE a = ?2"), "SELECT 1 -- why ?1\nWHERE a = $2");
        assert_eq!(placeholders("SELECT /* ?1 */ ?2"), "SELECT /* ?1 */ $2");
        assert_eq!(placeholders("SELECT /*/ ?1 */ ?2"), "SELECT /*/ ?1 */ $2");
        assert_eq!(placeholders("SELECT a - -?1"), "SELECT a - -$1");
    }

    #[test]
    fn other_text_is_unchanged() {
        for sql in ["SELECT 1", "SELECT a ? b", "SELECT ?", "", "SELECT 'unterminated ?1", "SELECT é, ?x"] {
            assert_eq!(placeholders(sql), sql);
        }
    }
}
