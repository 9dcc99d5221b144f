vcl 4.1;

# The edge cache in front of the shop (Varnish 7, vmod xkey from Debian's varnish-modules):
# it keeps the answers Django marks as everybody's and passes every other request through
# untouched. Rules and why: docs/edge.md. Started as
#
#   varnishd -a :80 -f /srv/seckill/deploy/edge.vcl -p vcl_path=/srv/seckill/deploy -s malloc,1g \
#       -s Transient=malloc,256m -p thread_pools=1
#
# (tools/edge.py starts one for development and the tests). Two files, found on varnishd's
# vcl_path, say where it stands: edge-backend.vcl where the shop is (deploy's names
# 127.0.0.1:8000), edge-purgers.vcl who may purge (deploy's admits localhost).

import std;
import vsthrottle;
import xkey;

include "edge-backend.vcl";

# Who may purge, `acl purgers`: the shop's web nodes and Celery workers (seckill_site.edge).
# Matched against the TCP peer (or the PROXY protocol's client), never a header anyone can send.
include "edge-purgers.vcl";

# What the edge answers itself (a ticketed result poll), from Redis: answers_recv, answers_synth.
include "edge-answers.vcl";

# The waiting room's pass for a sale's buy, captcha and path, read with edge-answers.vcl's
# Redis and words: pass_recv, pass_synth.
include "edge-pass.vcl";

sub vcl_recv {
    call stale_recv;
    if (req.method == "PURGE") {
        call purge_by_key;
    }
    call vcl_req_host;
    call answers_recv;
    call pass_recv;
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # The shared URLs, matched with their query string: a query the pages do not take makes
    # the request a pass rather than a cached copy of a page it did not ask for.
    if (req.url ~ "^(/zh-hans)?/goods/(goodsList|detail/[0-9]+)$") {
        call language_chosen;
        call shared;
    }
    if (req.url ~ "^(/zh-hans)?/goods/getDetails/[0-9]+$") {
        # A logged-in shopper's poll carries their own `user` field.
        if (req.http.Cookie ~ "(^|;)\s*sessionid=") {
            return (pass);
        }
        call shared;
    }
    # The item page's refresh of the sale's state: the same for everybody, whoever's cookie.
    if (req.url ~ "^/seckill/saleState/[0-9]+$") {
        call shared;
    }
    # The pages' scripts' words (Django's JavaScript catalogue), in the URL's language.
    if (req.url ~ "^(/zh-hans)?/jsi18n/$") {
        call language_chosen;
        call shared;
    }
    if (req.url ~ "^/static/") {
        call shared;
    }
    return (pass);
}

# A visitor who chose Chinese with the shop's switch (its cookie) and asks for an unprefixed page
# goes to the Chinese one, as Django sends them (seckill_site.shared): the cookie is dropped
# before the lookup, so Django cannot see it here.
sub language_chosen {
    if (req.url !~ "^/zh-hans/" && req.http.Cookie ~ "(^|;)\s*django_language=zh-hans\s*(;|$)") {
        return (synth(302, "/zh-hans" + req.url));
    }
}

# A request for everybody's answer: drop what could make the backend answer this visitor in
# particular (the language is in the URL), so that the copy kept is the one anyone would get.
sub shared {
    if (req.http.Authorization) {
        return (pass);
    }
    unset req.http.Cookie;
    unset req.http.Accept-Language;
    # Two variants at most under `Vary: Accept-Encoding`: gzip or not.
    if (req.http.Accept-Encoding ~ "gzip") {
        set req.http.Accept-Encoding = "gzip";
    } else {
        unset req.http.Accept-Encoding;
    }
    return (hash);
}

# PURGE with `xkey-purge: key1 key2` drops every object tagged with any of the keys. A hard
# purge: the next request waits for the backend's fresh answer (one fetch per object, the
# others queue behind it). A soft purge would hand out the old page for the length of that
# fetch, or for the whole grace while the backend struggles, and a purge here means the page
# changed: a sale opened, sold out or was edited.
sub purge_by_key {
    if (client.ip !~ purgers) {
        return (synth(403, "Forbidden"));
    }
    if (!req.http.xkey-purge) {
        return (synth(400, "No xkey-purge header"));
    }
    set req.http.xkey-purged = xkey.purge(req.http.xkey-purge);
    return (synth(200, "Purged"));
}

# A copy past the backend's own grace (stale-while-revalidate) is handed out only while the shop
# cannot answer: its probe fails (shop_health, edge-backend.vcl), or it answered a fetch of
# everybody's page with a 5xx or not at all in the last 5 seconds (a PostgreSQL failover leaves
# /healthz green). Only a copy still held can be: a purge removes its objects, so a page a purge
# dropped is never handed out again. The steps, by the request's headers (none of which a client
# can send: stale_recv drops them):
#
# - vcl_hit, a copy past its grace: handed out (X-Edge-Stale) if the shop cannot answer, else
#   the request starts again with X-Edge-Refetch and no grace, and waits for a fresh one;
# - vcl_backend_response/vcl_backend_error: a 5xx or no answer to that fetch is abandoned, and
#   the request starts again with X-Edge-Stale-Ok, which hands out the copy (vcl_synth); so do
#   the requests that waited on the same fetch (vcl_miss), each without a fetch of its own;
# - a first miss, with no copy held, gets the shop's own 5xx, as before.
sub stale_recv {
    if (req.restarts == 0) {
        unset req.http.X-Edge-Refetch;
        unset req.http.X-Edge-Stale-Ok;
        unset req.http.X-Edge-Stale;
    }
    # req.grace outlives a restart: each one sets its own.
    if (req.http.X-Edge-Refetch) {
        set req.grace = 0s;
    } elsif (req.http.X-Edge-Stale-Ok) {
        set req.grace = 1h;
    }
}

sub vcl_hit {
    if (obj.ttl >= 0s || obj.ttl + std.duration(obj.http.X-Edge-Grace, 0s) > 0s) {
        return (deliver);  # fresh, or within the backend's grace (a fetch refreshes it)
    }
    if (req.http.X-Edge-Stale-Ok || !std.healthy(shop_health) || vsthrottle.remaining("shop-5xx", 1, 5s) == 0) {
        set req.http.X-Edge-Stale = "1";
        return (deliver);
    }
    set req.http.X-Edge-Refetch = "1";
    return (restart);
}

sub vcl_miss {
    # Waited on a fetch that failed: the copy it would have replaced, without another fetch.
    if (req.http.X-Edge-Refetch && (!std.healthy(shop_health) || vsthrottle.remaining("shop-5xx", 1, 5s) == 0)) {
        call stale_restart;
    }
}

sub stale_restart {
    unset req.http.X-Edge-Refetch;
    set req.http.X-Edge-Stale-Ok = "1";
    return (restart);
}

# The shop failed a fetch of everybody's page: the copies held are handed out for a while.
# It takes the one token of a bucket refilled in 5 s, so vsthrottle.remaining() says 0 until
# then; while the shop goes on failing, the first request after that fetches and marks it again.
sub shop_failed {
    if (vsthrottle.is_denied("shop-5xx", 1, 5s)) {
        std.log("shop-5xx: marked already");
    }
}

sub vcl_backend_error {
    if (!bereq.uncacheable) {
        call shop_failed;
        if (bereq.is_bgfetch || bereq.http.X-Edge-Refetch) {
            return (abandon);
        }
    }
}

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);  # a pass: nothing is kept
    }
    if (beresp.status >= 500) {
        call shop_failed;
        if (bereq.is_bgfetch || bereq.http.X-Edge-Refetch) {
            return (abandon);  # keep serving the copy held (in grace, or stale_recv's)
        }
        # Not kept, and only briefly remembered as uncacheable: a busy moment during an
        # opening must not stop requests from being coalesced for the builtin's two minutes.
        set beresp.ttl = 1s;
        set beresp.uncacheable = true;
        return (deliver);
    }
    # Kept only when the backend says everybody may have it and sets no cookie, so a mistake
    # in Django hands no visitor's page or session to another (hit-for-miss: a later answer
    # that is fine is kept at once).
    if (beresp.http.Set-Cookie || beresp.http.Cache-Control !~ "(?i)(^|[,\s])public\s*(,|$)") {
        call vcl_beresp_hitmiss;
    }
    # Varnish took the TTL from s-maxage and the grace from stale-while-revalidate; the
    # builtin still refuses ttl 0, no-store, private and `Vary: *`.
    call vcl_builtin_backend_response;
    # The backend's grace decides while it answers (vcl_hit); the copy is kept an hour
    # longer, to be handed out while it does not.
    set beresp.http.X-Edge-Grace = beresp.grace + "s";
    set beresp.grace = 1h;
    # Everybody's answer holds no secret, so compressing it here leaks nothing (BREACH). Not
    # one under 1 KB (the poll): it fits a packet either way, and each hit by a client that
    # does not take gzip would be unzipped again.
    if (!beresp.http.Content-Encoding && std.integer(beresp.http.Content-Length, 1024) >= 1024
        && beresp.http.Content-Type ~ "^(text/|application/(json|javascript)|image/svg\+xml)") {
        set beresp.do_gzip = true;
    }
    return (deliver);
}

sub vcl_deliver {
    unset resp.http.xkey;
    unset resp.http.X-Edge-Grace;
    # HIT: from the cache (in grace too; Age says how old); STALE: a copy past its grace while
    # the shop cannot answer; MISS: fetched and kept; PASS: fetched and not kept.
    if (req.http.X-Edge-Stale) {
        set resp.http.X-Cache = "STALE";
    } elsif (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}

sub vcl_synth {
    if (resp.status == 503 && req.http.X-Edge-Refetch) {
        call stale_restart;  # the fetch that was to replace a copy failed: hand the copy out
    }
    call answers_synth;
    call pass_synth;
    if (resp.status == 302) {
        set resp.http.Location = resp.reason;
        set resp.http.Cache-Control = "private";
        set resp.http.Vary = "Cookie";
        set resp.reason = "Found";
        set resp.body = "";
        return (deliver);
    }
    if (req.method == "PURGE") {
        set resp.http.Content-Type = "text/plain; charset=utf-8";
        if (resp.status == 200) {
            set resp.http.xkey-purged = req.http.xkey-purged;
            set resp.body = "purged " + req.http.xkey-purged + {"
"};
        } else {
            set resp.body = resp.reason + {"
"};
        }
        return (deliver);
    }
}
