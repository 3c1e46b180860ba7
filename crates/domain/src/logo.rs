//! Logos on the pages: a tenant's beside its name (PNG or SVG), an application's on its consent
//! and login pages (PNG). Every image is checked before it is stored and refused whole rather
//! than repaired: an operator learns what is wrong with the file, and nothing the pages serve
//! was rewritten by us.
//!
//! An SVG is a document that can run script and fetch other URLs. Browsers run neither for an
//! `<img>`, and the logo's own response forbids both (`default-src 'none'`, `sandbox`), but a
//! logo is also opened directly and copied into other places; so an SVG is accepted only when it
//! is plain drawing: elements of an allow-list in the SVG namespace, no event handler, no
//! reference outside the document (`href` only to `#fragment`, `url(#fragment)` only), no
//! style sheet import, no DTD (no entities), no processing instruction.

use base64::Engine as _;
use latchkey::codes;

use crate::crypto::sha256;
use crate::error::Error;

/// Largest logo accepted, and the largest side of a PNG in pixels.
pub const MAX_BYTES: usize = 256 * 1024;
const MAX_SIDE: u32 = 1024;

/// A checked logo, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logo {
    pub content_type: &'static str,
    pub bytes: Vec<u8>,
    /// Hex SHA-256 of the bytes: the version the pages name in the logo's URL.
    pub sha: String,
}

/// Which formats a logo may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    Png,
    PngOrSvg,
}

/// A logo as sent (base64 of the file), checked.
pub fn check(base64: &str, formats: Formats) -> Result<Logo, Error> {
    let bad = |why: String| Error::invalid(codes::INVALID_INPUT, format!("logo: {why}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .map_err(|_| bad("not base64 (the CLI's --logo FILE sends the file as it is)".into()))?;
    if bytes.len() > MAX_BYTES {
        return Err(bad(format!("{} bytes; at most {} KiB", bytes.len(), MAX_BYTES / 1024)));
    }
    let content_type = if looks_like_svg(&bytes) {
        if formats == Formats::Png {
            return Err(bad("SVG logos are not accepted here; give a PNG".into()));
        }
        svg(&bytes).map_err(|why| bad(format!("the SVG is refused: {why}")))?;
        "image/svg+xml"
    } else {
        png(&bytes).map_err(bad)?;
        "image/png"
    };
    let sha = crate::crypto::hex(&sha256(&bytes));
    Ok(Logo { content_type, bytes, sha })
}

fn looks_like_svg(bytes: &[u8]) -> bool {
    let start = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    start.trim_ascii_start().starts_with(b"<") || bytes.windows(4).take(1024).any(|w| w == b"<svg")
}

/// The PNG signature, then the IHDR chunk: length 13, "IHDR", width and height (big-endian),
/// each side 1 to [`MAX_SIDE`] pixels.
fn png(bytes: &[u8]) -> Result<(), String> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    let header = bytes.get(8..24).filter(|_| bytes.starts_with(SIGNATURE));
    let Some(h) = header.filter(|h| h[..8] == [0, 0, 0, 13, b'I', b'H', b'D', b'R']) else {
        return Err("not a PNG image (or an SVG)".into());
    };
    let width = u32::from_be_bytes([h[8], h[9], h[10], h[11]]);
    let height = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
    if width == 0 || height == 0 || width > MAX_SIDE || height > MAX_SIDE {
        return Err(format!("{width}×{height} pixels; at most {MAX_SIDE} a side"));
    }
    Ok(())
}

const SVG_NS: &str = "http://www.w3.org/2000/svg";
const XLINK_NS: &str = "http://www.w3.org/1999/xlink";
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// Drawing elements: shapes, text, structure, paint servers, clipping, masking and filters.
/// Absent on purpose: `script`, `foreignObject`, `image`, `a`, `iframe`, the animation elements
/// (`set` and `animate` can rewrite an `href` after the check), `feImage` (fetches a URL).
const ELEMENTS: &[&str] = &[
    "svg",
    "g",
    "defs",
    "symbol",
    "use",
    "title",
    "desc",
    "metadata",
    "style",
    "switch",
    "path",
    "rect",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "textPath",
    "linearGradient",
    "radialGradient",
    "stop",
    "pattern",
    "clipPath",
    "mask",
    "marker",
    "filter",
    "feBlend",
    "feColorMatrix",
    "feComponentTransfer",
    "feComposite",
    "feConvolveMatrix",
    "feDiffuseLighting",
    "feDisplacementMap",
    "feDistantLight",
    "feDropShadow",
    "feFlood",
    "feFuncA",
    "feFuncB",
    "feFuncG",
    "feFuncR",
    "feGaussianBlur",
    "feMerge",
    "feMergeNode",
    "feMorphology",
    "feOffset",
    "fePointLight",
    "feSpecularLighting",
    "feSpotLight",
    "feTile",
    "feTurbulence",
];

/// Checks that an SVG is plain drawing (see the module's documentation); says what is not.
fn svg(bytes: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())?;
    // roxmltree refuses a DTD by default: no entity can expand or reach outside.
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("it is not well-formed XML ({e})"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "svg" || root.tag_name().namespace() != Some(SVG_NS) {
        return Err(format!("its root element is <{}>, not <svg xmlns=\"{SVG_NS}\">", root.tag_name().name()));
    }
    for node in doc.descendants() {
        if node.is_pi() {
            return Err("it has a processing instruction (such as xml-stylesheet)".into());
        }
        if !node.is_element() {
            continue;
        }
        let (name, ns) = (node.tag_name().name(), node.tag_name().namespace());
        if ns != Some(SVG_NS) || !ELEMENTS.contains(&name) {
            return Err(format!("it has a <{name}> element, which a logo may not have (only drawing)"));
        }
        if name == "style" {
            // The whole sheet at once: a comment splits its text into several nodes, which the
            // browser joins again.
            let sheet: String = node.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect();
            style(&sheet, true)?;
        }
        for a in node.attributes() {
            let (attr, value) = (a.name(), a.value());
            if attr.to_ascii_lowercase().starts_with("on") {
                return Err(format!("<{name}> has an event handler ({attr})"));
            }
            let is_href = attr == "href" && matches!(a.namespace(), None | Some(XLINK_NS));
            if is_href && !value.trim_start().starts_with('#') {
                return Err(format!(
                    "<{name}> refers to {:?}; a logo refers only to its own parts (#id)",
                    short(value)
                ));
            }
            // `xml:space` and `xml:lang` only: `xml:base` would move where `#id` points.
            let allowed_ns = match a.namespace() {
                None | Some(XLINK_NS) | Some(SVG_NS) => true,
                Some(XML_NS) => matches!(attr, "space" | "lang"),
                Some(_) => false,
            };
            if !allowed_ns {
                return Err(format!("<{name}> has an attribute of another namespace ({attr})"));
            }
            style(value, attr == "style").map_err(|why| format!("<{name} {attr}>: {why}"))?;
        }
    }
    Ok(())
}

/// A style sheet (`sheet`: a `<style>` or a `style` attribute) or another attribute's value:
/// `url()` only to a fragment of the document; no CSS escape (with which `\75 rl(` is `url(`),
/// no at-rule in a sheet (`@import`, `@font-face`), none of the functions that load an image from
/// a string (`image-set`, `src`, …), no script URL. Plain drawing needs none of them.
fn style(css: &str, sheet: bool) -> Result<(), String> {
    if css.contains('\\') {
        return Err("it has a CSS escape (\\)".into());
    }
    let lower: String = css.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect();
    if sheet && lower.contains('@') {
        return Err(if lower.contains("@import") { "it imports a style sheet" } else { "it has a CSS at-rule" }.into());
    }
    if ["image-set(", "src(", "cross-fade(", "element(", "image("].iter().any(|f| lower.contains(f)) {
        return Err("it loads an image from a CSS function".into());
    }
    if lower.contains("javascript:") || lower.contains("expression(") {
        return Err("it has script in a value".into());
    }
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("url(") {
        rest = &rest[at + 4..];
        if !rest.trim_start_matches(['"', '\'']).starts_with('#') {
            return Err("it has a url() outside the document; only url(#id) is allowed".into());
        }
    }
    Ok(())
}

fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn refused(svg_text: &str) -> String {
        match check(&b64(svg_text.as_bytes()), Formats::PngOrSvg) {
            Ok(_) => panic!("accepted: {svg_text}"),
            Err(e) => e.message,
        }
    }

    const OK: &str = r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 32 32">
  <title>Acme</title>
  <defs><linearGradient id="g"><stop offset="0" stop-color="#123"/></linearGradient>
  <path id="p" d="M0 0h32v32z"/></defs>
  <style>.a { fill: url(#g); }</style>
  <rect class="a" width="32" height="32" style="fill:url('#g')"/>
  <use xlink:href="#p"/><use href="#p"/><text xml:space="preserve" xml:lang="en">Acme</text>
</svg>"##;

    #[test]
    fn plain_drawing_is_accepted_with_its_type_and_hash() {
        let logo = check(&b64(OK.as_bytes()), Formats::PngOrSvg).unwrap();
        assert_eq!(logo.content_type, "image/svg+xml");
        assert_eq!(logo.sha.len(), 64);
        let m = check(&b64(OK.as_bytes()), Formats::Png).unwrap_err().message;
        assert!(m.contains("give a PNG"), "{m}");
    }

    #[test]
    fn script_handlers_and_outside_references_are_refused() {
        let svg = |inner: &str| format!(r#"<svg xmlns="http://www.w3.org/2000/svg">{inner}</svg>"#);
        for (inner, says) in [
            ("<script>alert(1)</script>", "<script>"),
            (r#"<rect onload="alert(1)"/>"#, "event handler"),
            (r#"<rect ONCLICK="x()"/>"#, "event handler"),
            (r#"<use href="https://evil.example/x.svg#a"/>"#, "refers to"),
            (r#"<use xmlns:l="http://www.w3.org/1999/xlink" l:href="data:image/svg+xml,x"/>"#, "refers to"),
            (r#"<image href="https://evil.example/p.png"/>"#, "<image>"),
            (r#"<foreignObject><p xmlns="http://www.w3.org/1999/xhtml">x</p></foreignObject>"#, "<foreignObject>"),
            (r#"<a href="javascript:alert(1)"><rect/></a>"#, "<a>"),
            (r#"<set attributeName="href" to="javascript:alert(1)"/>"#, "<set>"),
            (r#"<rect style="fill: url(https://evil.example/)"/>"#, "url()"),
            (r#"<rect fill="url( 'http://x/#g')"/>"#, "url()"),
            ("<style>@import 'https://evil.example/a.css';</style>", "imports"),
            ("<style>@im\\port 'x';</style>", "CSS escape"),
            ("<style>@imp<!---->ort 'https://evil.example/a.css';</style>", "imports"),
            ("<style>rect{fill:ur<!---->l(https://evil.example/p.svg#g)}</style>", "url()"),
            (r#"<rect style="fill:\75 rl(https://evil.example/x)"/>"#, "CSS escape"),
            ("<style>@font-face{font-family:x}</style>", "at-rule"),
            (r#"<rect style="background-image:image-set('https://evil.example/a.png' 1x)"/>"#, "CSS function"),
            (r#"<rect style="background:-webkit-image-set('https://evil.example/a.png' 1x)"/>"#, "CSS function"),
            (r##"<use xml:base="https://evil.example/" href="#p"/>"##, "another namespace"),
            (r#"<rect xmlns:x="http://evil.example/w3.org/XML/" x:base="https://e/"/>"#, "another namespace"),
            (r#"<h:script xmlns:h="http://www.w3.org/1999/xhtml">x</h:script>"#, "<script>"),
        ] {
            let m = refused(&svg(inner));
            assert!(m.contains(says), "{inner}: {m}");
        }
        let m = refused(
            r#"<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg xmlns="http://www.w3.org/2000/svg">&x;</svg>"#,
        );
        assert!(m.contains("well-formed"), "{m}");
        let m =
            refused(r#"<?xml-stylesheet href="https://evil.example/a.css"?><svg xmlns="http://www.w3.org/2000/svg"/>"#);
        assert!(m.contains("processing instruction"), "{m}");
        let m = refused("<svg><rect/></svg>");
        assert!(m.contains("root element"), "{m}");
        let m = refused("<html/>");
        assert!(m.contains("root element"), "{m}");
    }

    #[test]
    fn pngs_are_checked_for_header_size_and_sides() {
        let png = |w: u32, h: u32| {
            let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
            b.extend(w.to_be_bytes());
            b.extend(h.to_be_bytes());
            b
        };
        assert_eq!(check(&b64(&png(64, 64)), Formats::Png).unwrap().content_type, "image/png");
        assert!(check(&b64(&png(4096, 64)), Formats::Png).unwrap_err().message.contains("4096×64"));
        assert!(check(&b64(b"GIF89a........"), Formats::PngOrSvg).unwrap_err().message.contains("not a PNG"));
        let mut big = png(64, 64);
        big.resize(MAX_BYTES + 1, 0);
        assert!(check(&b64(&big), Formats::PngOrSvg).unwrap_err().message.contains("at most 256 KiB"));
        assert!(check("not base64!", Formats::Png).unwrap_err().message.contains("not base64"));
    }
}
