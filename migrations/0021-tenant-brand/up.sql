-- A tenant's brand on its pages (latchkey tenant brand): the name people see (NULL: the tenant's
-- name), the accent colour of its buttons and links ("#rrggbb", checked for contrast; NULL: the
-- default blue), and the language of its pages when the browser asks for none Latchkey speaks
-- (NULL: English).
--
-- Additive: 0.2.0 serves this schema unchanged (its pages show no brand).
ALTER TABLE tenants ADD COLUMN display_name TEXT;
ALTER TABLE tenants ADD COLUMN accent_color TEXT;
ALTER TABLE tenants ADD COLUMN default_locale TEXT;
