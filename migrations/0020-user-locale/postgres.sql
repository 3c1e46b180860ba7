-- The language a user's e-mails are written in (latchkey user invite --locale): a BCP 47 tag of a
-- shipped catalogue (en, de, fr, es, pt-BR, ja, zh-CN). NULL: English.
--
-- Additive: 0.2.0 serves this schema unchanged (it writes every e-mail in English).
ALTER TABLE users ADD COLUMN locale TEXT;
