// Runs a parser that must refuse its input and returns the GatewayError it threw.
import { GatewayError, type Reason } from '../../src/contract/errors';

export function rejection<T>(parse: (input: T) => unknown, input: T, reason: Reason = 'invalid_request'): GatewayError {
  try {
    parse(input);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    const e = err as GatewayError;
    expect(e.reason).toBe(reason);
    expect(e.message.length).toBeGreaterThan(10);
    return e;
  }
  throw new Error(`expected a rejection of ${JSON.stringify(input)}`);
}
