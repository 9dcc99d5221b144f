# Where deploy/edge.vcl finds the shop: its web server, or the load balancer in front of its
# nodes. Edit the address here; tools/edge.py writes a copy of its own for each run.

backend shop {
    .host = "127.0.0.1";
    .port = "8000";
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}
