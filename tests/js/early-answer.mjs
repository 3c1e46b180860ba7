// Node's own fetch (undici) sends a large body to an endpoint that answers before reading it
// (a bulk invitation without a valid token, or a body over the limit). Usage:
//   node early-answer.mjs URL BYTES [BEARER]
// Prints {"status": N, "error": "..."} or {"failed": "message"} as JSON.
const [url, bytes, bearer] = process.argv.slice(2);
const boundary = "----latchkey-test";
const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="users.csv"\r\nContent-Type: text/csv\r\n\r\nemail,name\r\n`;
const rows = "someone@example.com,Some One\r\n".repeat(Math.ceil(Number(bytes) / 30));
const body = Buffer.from(`${head}${rows}\r\n--${boundary}--\r\n`);
const headers = { "content-type": `multipart/form-data; boundary=${boundary}` };
if (bearer) headers.authorization = `Bearer ${bearer}`;
try {
  const r = await fetch(url, { method: "POST", body, headers });
  const j = await r.json().catch(() => ({}));
  console.log(JSON.stringify({ status: r.status, error: j.error ?? null }));
} catch (e) {
  console.log(JSON.stringify({ failed: `${e.message}: ${e.cause?.code ?? e.cause ?? ""}` }));
}
