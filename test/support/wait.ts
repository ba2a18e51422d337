// Waiting on a condition the test cannot be told about (a background scrape,
// a gauge on the metrics listener): checked every 20 ms, failing with what it
// waited for once `timeoutMs` passes. Never a fixed sleep.
export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
