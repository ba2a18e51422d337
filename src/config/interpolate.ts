// Replaces ${VAR} and ${VAR:-default} in every string value of a parsed config.
// Done on values, not on the raw text, so a variable can never inject YAML.

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, problems: string[], path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (_match, name: string, fallback: string | undefined) => {
      // Its own variables only: ${constructor} is a variable that is not set, not Object's constructor.
      const found = Object.hasOwn(env, name) ? env[name] : undefined;
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      problems.push(`${path || '(root)'}: environment variable ${name} is not set and has no default (write \${${name}:-value} to give one)`);
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => interpolateEnv(item, env, problems, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    // Made from entries: a key named __proto__ stays a key (the schema names it), never the object's prototype.
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env, problems, path ? `${path}.${key}` : key)]));
  }
  return value;
}
