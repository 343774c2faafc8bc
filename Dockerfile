# The container image of the release binary, as release tools build it: the
# static binary of `make build` on an empty base, nothing else to patch.
# `make image` fills the build context (build/image/): the binary, the build
# machine's CA certificates, a passwd line for the non-root user and the
# folders /data and /tmp.
FROM scratch

COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY passwd /etc/passwd
# Owned by the user the server runs as: COPY makes a folder's destination
# root's 0755 whatever the context's mode (server backup /tmp/x.db, and
# SQLite's temporary files, need /tmp writable).
COPY --chown=65532:65532 tmp /tmp
COPY --chown=65532:65532 data /data
COPY server /server

# Not root: the numeric id needs no lookup, and Kubernetes' runAsNonRoot can
# check it.
USER 65532:65532

# The embedded SQLite database (and its key file) live on the volume.
ENV ADDR=:8080 \
    DATABASE_URL=sqlite:/data/app.db
VOLUME /data
EXPOSE 8080

# The binary asks its own /healthz: the image has no shell or curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/server", "healthcheck", "-timeout", "3s"]

# SIGTERM drains in-flight requests for up to SHUTDOWN_TIMEOUT (20s): give
# `docker stop -t` more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/server"]
CMD ["serve"]
