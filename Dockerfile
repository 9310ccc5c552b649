# The reclaim watcher's image: `terraform-provider-gpu watch` in a container.
#
#   docker build -t gpu-tf/terraform-provider-gpu:0.1.0 .
#
# Multi-stage: a static (musl) release build, then an image with only the binary and the
# CA certificates it needs for HTTPS to the clouds. It runs as user 65532 (no shell, no
# package manager, nothing to write: run it with a read-only root filesystem, as
# examples/reclaim-watcher does). The Deployment and CronJob pass `watch` and its flags as
# arguments.

FROM rust:1-bookworm AS build
# musl for a static binary; cmake and clang for aws-lc-rs (the TLS crypto) on musl.
RUN apt-get update \
 && apt-get install -y --no-install-recommends musl-tools cmake clang \
 && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY . .
RUN cargo build --release --locked --target x86_64-unknown-linux-musl -p terraform-provider-gpu \
 && cp target/x86_64-unknown-linux-musl/release/terraform-provider-gpu /terraform-provider-gpu

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /terraform-provider-gpu /terraform-provider-gpu
USER 65532:65532
ENTRYPOINT ["/terraform-provider-gpu"]
CMD ["watch", "--help"]
