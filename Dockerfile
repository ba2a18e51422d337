# Sluice gateway image: build with dev dependencies, run with production ones only.
# CI runs the test suite on this Node major too (.ci/image-node reads it from here).
FROM node:24-bookworm-slim AS build
WORKDIR /app
# The install step: only the manifest and the lock file (CI repeats exactly this step in an empty folder).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY plugins ./plugins
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY config ./config
# The default config listens on 0.0.0.0 so a published port reaches it (the repo's gateway.yaml binds loopback).
COPY config/container.yaml ./config/gateway.yaml
USER node
EXPOSE 8080 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "require('http').get('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz',r=>process.exit(r.statusCode===200?0:1)).on('error',()=>process.exit(1))"
# The server is PID 1 itself, so `docker kill --signal=HUP` reloads and `docker stop` drains.
# A larger young generation: fewer garbage-collection pauses under per-request churn (see docs/operations.md, Memory and garbage collection).
CMD ["node", "--max-semi-space-size=32", "dist/src/cli/main.js", "serve"]
