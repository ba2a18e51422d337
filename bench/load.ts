// The load generator in a process of its own, so its CPU is its own and can
// be measured apart from the gateway's: runs autocannon once and prints the
// result as one JSON line, with the CPU time it spent.
// Run: node dist/bench/load.js '{"url":…,"method":"POST","headers":{…},"body":"…","connections":32,"duration":5}'

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: object) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

const cpuBefore = process.cpuUsage();
autocannon(JSON.parse(process.argv[2])).then((r) => {
  const cpu = process.cpuUsage(cpuBefore);
  process.stdout.write(`${JSON.stringify({ average: r.requests.average, total: r.requests.total, non2xx: r.non2xx, errors: r.errors, cpuMicros: cpu.user + cpu.system })}\n`);
}, (err: Error) => {
  process.stderr.write(`load: ${err.message}\n`);
  process.exitCode = 1;
});
