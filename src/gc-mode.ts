// How V8 collects the old generation in a serving process: in one pause
// when it must, not in incremental steps between requests.
//
// With incremental marking on (V8's default), every major collection that
// started under load kept the young objects of the requests in flight alive
// until it finished, promoting them to the old generation, which brought on
// the next major collection: measured under load, about 11 KB of each
// request's 47 KB was promoted, young collections cost about 15 µs a request,
// and the gateway spent 146 µs of CPU per JSON request. Without it nothing
// of a request is promoted (0.07 KB), the old generation stays flat, and the
// same run costs 100-108 µs. The price is that a major collection, rare now,
// is one pause (9 ms for the old generation of a started gateway).
// Set at the start of the process, before the heap grows; the flag is not
// allowed in NODE_OPTIONS, so it is set here for every way of starting.
import { setFlagsFromString } from 'node:v8';

export function useAtomicMajorGc(): void {
  setFlagsFromString('--no-incremental-marking');
}
