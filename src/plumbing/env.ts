// The environment variables the process itself reads, checked before anything
// starts so a typo stops it with one line that names the variable:
//   LOG_LEVEL       the log level (info)
//   PORT            overrides server.port
//   GATEWAY_CONFIG  the config file (config/gateway.yaml)
// Config values written as ${VAR} are checked with the config, each with its path.

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** An empty variable counts as unset, as a shell's `PORT= sluice serve` means. */
const given = (value: string | undefined): value is string => value !== undefined && value !== '';

export function logLevelProblem(value: string | undefined): string | undefined {
  if (!given(value) || (LOG_LEVELS as readonly string[]).includes(value)) return undefined;
  return `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(value)})`;
}

export function portProblem(value: string | undefined): string | undefined {
  if (!given(value) || (/^\d{1,5}$/.test(value) && Number(value) <= 65535)) return undefined;
  return `PORT must be a port number from 0 to 65535 (got ${JSON.stringify(value)})`;
}

/** PORT as a number when it is set and valid, else undefined. */
export const portFromEnv = (env: NodeJS.ProcessEnv): number | undefined =>
  given(env.PORT) && portProblem(env.PORT) === undefined ? Number(env.PORT) : undefined;

export const logLevelFromEnv = (env: NodeJS.ProcessEnv): string => (given(env.LOG_LEVEL) ? env.LOG_LEVEL : 'info');

/** Every problem with the variables above, one line each; [] when they are fine. */
export function environmentProblems(env: NodeJS.ProcessEnv): string[] {
  return [logLevelProblem(env.LOG_LEVEL), portProblem(env.PORT)].filter((p): p is string => p !== undefined);
}
