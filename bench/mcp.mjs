// The cost of a command through `agentbash mcp` under the official TypeScript SDK client (docs/reference.md §12,
// §9), timed by bench/mcp.py: one Node process connects the SDK's Client over stdio to `agentbash mcp` (its
// default per-connection session) and to `agentbash mcp --no-session`, then each round calls the `bash` tool with
// `true` once on each connection and spawns bare `bash -c true` once (child_process.spawn, awaited until it
// exits), in a new random order. Prints one JSON object: each case's round-trip times in seconds, in round order.
//   node bench/mcp.mjs AGENTBASH ROUNDS WARMUP      (MCP_TYPESCRIPT_SDK names the folder whose node_modules holds
//                                                    @modelcontextprotocol/sdk, as .ci/run sets it)
import { createRequire } from "node:module";
import { spawn } from "node:child_process";
import path from "node:path";

const [ab, rounds, warmup] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const sdk = process.env.MCP_TYPESCRIPT_SDK;
if (!ab || !sdk || !(rounds > 0)) {
  console.error("usage: MCP_TYPESCRIPT_SDK=DIR node bench/mcp.mjs AGENTBASH ROUNDS WARMUP");
  process.exit(2);
}
const require = createRequire(path.join(sdk, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

async function connect(args) {
  const transport = new StdioClientTransport({ command: ab, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "agentbash-bench", version: "1.0.0" });
  await client.connect(transport);
  await client.listTools(); // as clients do before their first call
  return client;
}

const call = (client) => async () => {
  const r = await client.callTool({ name: "bash", arguments: { command: "true" } });
  if (r.isError || r.structuredContent?.exitCode !== 0) throw new Error(`bash true: ${JSON.stringify(r).slice(0, 500)}`);
};

const bash = () => new Promise((resolve, reject) => {
  const c = spawn("bash", ["-c", "true"], { stdio: "ignore" });
  c.on("error", reject);
  c.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`bash -c true exited ${code}`))));
});

const session = await connect(["mcp"]);
const plain = await connect(["mcp", "--no-session"]);
const cases = { "mcp": call(session), "mcp, --no-session": call(plain), "bash -c true": bash };
const times = Object.fromEntries(Object.keys(cases).map((n) => [n, []]));
const order = Object.keys(cases);
for (let r = 0; r < warmup + rounds; r++) {
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  for (const name of order) {
    const t0 = performance.now();
    await cases[name]();
    const t = (performance.now() - t0) / 1e3;
    if (r >= warmup) times[name].push(t);
  }
}
await session.close();
await plain.close();
process.stdout.write(JSON.stringify(times) + "\n");
