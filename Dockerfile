# syntax=docker/dockerfile:1
# Build: a static binary from the module's sources.
FROM golang:1.26-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY pkg ./pkg
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
      -o /out/addon-operator ./cmd/addon-operator
# The modules' Go hooks (modules/*/hooks-go) are built into their hooks/.
COPY hack ./hack
COPY modules ./modules
RUN go run ./hack/buildhooks

# Runtime: hooks are scripts that spawn children, so bash, jq and tini (as
# PID 1, reaping orphans) are part of the image.
FROM debian:trixie-slim
# The debug socket's default directory must be the operator's to write.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash jq tini ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/run/addon-operator \
 && chown 65532:65532 /var/run/addon-operator
COPY --from=build /out/addon-operator /usr/local/bin/addon-operator
COPY --from=build /src/modules /modules
COPY global-hooks /global-hooks
ENV ADDON_OPERATOR_MODULES_DIR=/modules \
    ADDON_OPERATOR_GLOBAL_HOOKS_DIR=/global-hooks
# Hooks run in the operator's working directory, / as in the established
# image.
WORKDIR /
USER 65532:65532
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/addon-operator"]
CMD ["start"]
