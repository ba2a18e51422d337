// The Messages API page's error table says what the code does: each status it
// lists maps to the error type it names, and every type the gateway sends is
// on it (as docs-errors.test.ts keeps the reasons page true).
import { messagesErrorType } from '../../../src/protocols/messages/errors';
import { codeOf, readRepoFile, tableUnder } from '../../support/markdown';

describe('docs/messages.md', () => {
  const table = tableUnder(readRepoFile('docs/messages.md')!, 'Errors');

  it('maps each listed status to the type the gateway sends for it', () => {
    expect(table.header).toEqual(['Status', '`error.type`']);
    const wrong = table.rows.flatMap(([statuses, type]) => (statuses.match(/\d{3}/g) ?? [])
      .filter((status) => messagesErrorType(Number(status)) !== codeOf(type))
      .map((status) => `${status}: the page says ${type}, the gateway sends ${messagesErrorType(Number(status))}`));
    expect(wrong).toEqual([]);
  });

  it('lists every type the gateway sends', () => {
    const sent = new Set([400, 401, 403, 404, 405, 408, 413, 415, 429, 431, 500, 502, 503, 504, 529].map(messagesErrorType));
    expect([...sent].filter((type) => !table.rows.some((row) => codeOf(row[1]) === type))).toEqual([]);
  });
});
