// Reading JSON a backend sent, which no schema has checked: an object is
// looked into only after this says it is one.

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
