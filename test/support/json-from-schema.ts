// The smallest value a JSON Schema accepts (every required property, of its
// declared type), so a stand-in model can answer JSON-schema and tool-call
// requests the way a real one must: with JSON the client's validator passes.
type Schema = Record<string, any>;

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2024-01-01T00:00:00Z',
  date: '2024-01-01',
  time: '00:00:00',
  email: 'someone@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

export function sampleFromSchema(schema: Schema | boolean | undefined, root: Schema = schema as Schema, depth = 0): unknown {
  if (schema === undefined || typeof schema === 'boolean' || depth > 16) return null;
  if (typeof schema.$ref === 'string') return sampleFromSchema(resolveRef(root, schema.$ref), root, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    return sampleFromSchema(alternatives.find((s: Schema) => s.type !== 'null') ?? alternatives[0], root, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const merged = schema.allOf.map((s: Schema) => sampleFromSchema(s, root, depth + 1));
    return merged.every((v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)) ? Object.assign({}, ...merged) : merged[0];
  }
  switch (typeOf(schema)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of (schema.required ?? []) as string[]) out[key] = sampleFromSchema(schema.properties?.[key] ?? {}, root, depth + 1);
      return out;
    }
    case 'array': {
      const count = Math.min(Math.max(schema.minItems ?? 0, 1), schema.maxItems ?? Infinity);
      const prefix: Schema[] = schema.prefixItems ?? [];
      return Array.from({ length: Math.max(count, prefix.length) }, (_, i) => sampleFromSchema(prefix[i] ?? schema.items ?? {}, root, depth + 1));
    }
    case 'integer': return Math.ceil(withinBounds(schema, 1));
    case 'number': return withinBounds(schema, 1.5);
    case 'boolean': return true;
    case 'null': return null;
    default: return sampleString(schema);
  }
}

function typeOf(schema: Schema): string {
  if (Array.isArray(schema.type)) return schema.type.find((t: string) => t !== 'null') ?? 'null';
  if (typeof schema.type === 'string') return schema.type;
  if (schema.properties) return 'object';
  if (schema.items) return 'array';
  return 'string';
}

/** The fallback, moved inside the schema's bounds (zod's int() declares +-MAX_SAFE_INTEGER ones). */
function withinBounds(schema: Schema, fallback: number): number {
  let value = fallback;
  if (typeof schema.minimum === 'number') value = Math.max(value, schema.minimum);
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) value = schema.exclusiveMinimum + 1;
  if (typeof schema.maximum === 'number') value = Math.min(value, schema.maximum);
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) value = schema.exclusiveMaximum - 1;
  return value;
}

function sampleString(schema: Schema): string {
  const base = STRING_FORMATS[schema.format as string] ?? 'example';
  const long = base.padEnd(schema.minLength ?? 0, 'x');
  return typeof schema.maxLength === 'number' ? long.slice(0, schema.maxLength) : long;
}

function resolveRef(root: Schema, ref: string): Schema {
  if (!ref.startsWith('#')) return {};
  return ref.slice(1).split('/').filter(Boolean)
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<any>((node, part) => node?.[part], root) ?? {};
}
