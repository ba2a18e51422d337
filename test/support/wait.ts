// Waiting on a condition the test cannot be told about (a background scrape,
// a gauge on the metrics listener, a count in Redis, a stream under way):
// checked every 10 ms, failing with what it waited for once `timeoutMs`
// passes. The one wait every test uses; never a fixed sleep.
export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
