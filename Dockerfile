# syntax=docker/dockerfile:1
# Build: one self-contained executable (migrations and PGlite's WASM/data embedded).
FROM oven/bun:1.4 AS build
WORKDIR /src
COPY package.json package-lock.json bunfig.toml tsconfig.json ./
RUN bun install --frozen-lockfile --ignore-scripts || bun install --ignore-scripts
COPY db ./db
# Scripts were skipped above: apply the postgres.js fix for terminated backends (README, "Database faults").
RUN bun db/patch-postgres.mjs
COPY src ./src
# The studio is built here (Vite, under Bun: `bun run` stands in for node when there is none) and embedded in the binary.
COPY studio ./studio
ARG BUILD_SCRIPT=build
RUN bun run ${BUILD_SCRIPT} && mkdir -p /out/data && cp dist/content-service* /out/ 2>/dev/null; ls -la /out

# Run: the binary alone on a minimal base, as a non-root user.
FROM gcr.io/distroless/cc-debian12:nonroot
WORKDIR /app
COPY --from=build /out/content-service /app/content-service
COPY --from=build --chown=65532:65532 /out/data /data
ENV PORT=3000 HOST=0.0.0.0 DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 3000
USER 65532:65532
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["/app/content-service", "healthcheck"]
# The binary handles SIGTERM: stops accepting, drains in-flight requests, closes the database.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/content-service"]
