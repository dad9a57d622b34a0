// The official TypeScript client (@modelcontextprotocol/client, pinned in package-lock.json) against our
// gated server: list, search, schema-disclosure reads, a call with Mcp-Param-* headers, and the server's
// refusal of the same call without them. Run by `python -m scripts.interop`; usage: node ts_client.mjs URL
// Prints one JSON line: {"revision": ..., "checks": [{"name", "ok", "detail"}]}. Never prints values the
// server returned beyond names, digests and counts.
import { createHash } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const url = new URL(process.argv[2]);
const checks = [];
const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), detail });

// Header names (never values) of every tools/call POST, so "headers were sent" is observed on the wire.
const sentHeaderNames = [];
const recordingFetch = async (input, init = {}) => {
  const body = typeof init.body === "string" ? init.body : "";
  if (body.includes('"tools/call"')) {
    const names = [...new Headers(init.headers).keys()].filter((name) => name.startsWith("mcp-param-"));
    sentHeaderNames.push(names.sort());
  }
  return fetch(input, init);
};

const client = new Client(
  { name: "interop-typescript-client", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
const transport = new StreamableHTTPClientTransport(url, { fetch: recordingFetch });
let revision = "?";
const TOOL = "route_shipment";
try {
  await client.connect(transport);
  revision = client.getNegotiatedProtocolVersion() ?? "?";

  const listed = await client.listTools();
  const names = listed.tools.map((tool) => tool.name).sort();
  check("tools/list", names.includes("search_tools") && !names.includes(TOOL), `listed: ${names.join(", ")} (${TOOL} hidden behind search)`);

  const found = await client.callTool({ name: "search_tools", arguments: { pattern: TOOL } });
  const entries = found.structuredContent?.result ?? [];
  const entry = entries.find((item) => item.name === TOOL);
  check("search", entry && typeof entry.manifest_uri === "string", `${entries.length} navigation entries, ${TOOL} ${entry ? "found" : "missing"}`);

  const manifestRead = await client.readResource({ uri: entry.manifest_uri });
  const manifest = JSON.parse(manifestRead.contents[0].text);
  const base = entry.manifest_uri.replace(/\/manifest$/, "");
  const parts = [];
  for (let index = 0; index < manifest.fragment_count; index += 1) {
    const fragment = await client.readResource({ uri: `${base}/fragments/${index}` });
    // Each fragment resource is a JSON object; its `text` is the next slice of the canonical document.
    const body = JSON.parse(fragment.contents[0].text);
    if (body.index !== index) throw new Error(`fragment ${index} reports index ${body.index}`);
    parts.push(Buffer.from(body.text, "utf8"));
  }
  const document = Buffer.concat(parts);
  const digest = createHash("sha256").update(document).digest("hex");
  const schemas = JSON.parse(document.toString("utf8"));
  check(
    "disclosure reads",
    digest === entry.schema_sha256 && manifest.fragment_count === entry.fragment_count && schemas.inputSchema,
    `manifest + ${manifest.fragment_count} fragment(s) read, sha256 of the reassembled document ${digest === entry.schema_sha256 ? "matches" : "DIFFERS from"} the URI`,
  );

  const toolDefinition = { name: TOOL, inputSchema: schemas.inputSchema };
  if (schemas.outputSchema) toolDefinition.outputSchema = schemas.outputSchema;
  const routed = await client.callTool(
    { name: TOOL, arguments: { region: "Zürich west", priority: 2, express: true } },
    { toolDefinition },
  );
  const headers = sentHeaderNames.at(-1) ?? [];
  check(
    "call with Mcp-Param-* headers",
    !routed.isError && headers.join(",") === "mcp-param-express,mcp-param-priority,mcp-param-region",
    `headers sent: ${headers.join(", ") || "none"} (schema from the disclosure); result ${routed.isError ? "isError" : "ok"}`,
  );

  // Negative control: without the definition the client cannot know the annotations, sends no header,
  // and the server must refuse (HTTP 400, -32020 HeaderMismatch).
  try {
    await client.callTool({ name: TOOL, arguments: { region: "eu-west", priority: 1 } });
    check("same call without headers refused", false, "the server accepted a call missing its Mcp-Param-* headers");
  } catch (error) {
    check("same call without headers refused", error?.code === -32020, `refused with code ${error?.code}`);
  }
} catch (error) {
  check("run completed", false, `${error?.constructor?.name ?? "error"}${error?.code !== undefined ? ` (code ${error.code})` : ""}`);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify({ revision, checks }));
