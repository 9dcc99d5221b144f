# Where deploy/edge.vcl finds the shop: its web server, or the load balancer in front of its
# nodes. Edit the address here (both backends); tools/edge.py writes a copy of its own for each
# run.

backend shop {
    .host = "127.0.0.1";
    .port = "8000";
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}

# The same address, probed: whether the shop answers at all. Used only to decide whether a page
# past its grace may be handed out (deploy/edge.vcl, vcl_hit); requests always go to `shop`, so a
# probe slowed by an opening's load never turns a buy away. /healthz answers 200 whenever a web
# process answers (HAProxy: whenever a node is in rotation); sick after 3 of the last 5 failed
# (about 3 s), well again after 3 good ones. Its Host is .host, which ALLOWED_HOSTS must name.
probe shop_healthz {
    .url = "/healthz";
    .interval = 1s;
    .timeout = 1s;
    .window = 5;
    .threshold = 3;
    .initial = 3;
}

backend shop_health {
    .host = "127.0.0.1";
    .port = "8000";
    .probe = shop_healthz;
}
