// The workers' long polls the primary holds: one open per worker, answered
// when the primary has something for that worker, or with the idle answer
// once the wait runs out, so no message flows while there is nothing to say.
//
//   const polls = new WorkerPolls<boolean>(false);
//   handler: (_body, worker) => polls.hold(worker, 5_000);
//   later:   if (!polls.answer(worker, true)) owe it to the worker's next poll;
export class WorkerPolls<T> {
  private readonly open = new Map<number, (answer: T) => void>();

  constructor(private readonly idle: T) {}

  /** Resolves with what `answer` gives the worker, or the idle answer after `waitMs`; a newer poll of the same worker answers this one idle. */
  hold(worker: number, waitMs: number): Promise<T> {
    this.answer(worker, this.idle);
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(this.idle), waitMs);
      timer.unref();
      const done = (answer: T): void => {
        clearTimeout(timer);
        if (this.open.get(worker) === done) this.open.delete(worker);
        resolve(answer);
      };
      this.open.set(worker, done);
    });
  }

  /** Answers the worker's open poll; false when it has none open. */
  answer(worker: number, value: T): boolean {
    const poll = this.open.get(worker);
    if (poll === undefined) return false;
    this.open.delete(worker);
    poll(value);
    return true;
  }

  /** Answers every open poll with `value`. */
  answerAll(value: T): void {
    for (const worker of [...this.open.keys()]) this.answer(worker, value);
  }

  /** Answers every open poll idle (the primary stops). */
  closeAll(): void {
    this.answerAll(this.idle);
  }
}
