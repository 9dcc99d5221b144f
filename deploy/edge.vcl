vcl 4.1;

# The edge cache in front of the shop (Varnish 7, vmod xkey from Debian's varnish-modules):
# it keeps the answers Django marks as everybody's and passes every other request through
# untouched. Rules and why: docs/edge.md. Started as
#
#   varnishd -a :80 -f /srv/seckill/deploy/edge.vcl -p vcl_path=/srv/seckill/deploy -s malloc,1g
#
# (tools/edge.py starts one for development and the tests). Two files, found on varnishd's
# vcl_path, say where it stands: edge-backend.vcl where the shop is (deploy's names
# 127.0.0.1:8000), edge-purgers.vcl who may purge (deploy's admits localhost).

import xkey;

include "edge-backend.vcl";

# Who may purge, `acl purgers`: the shop's web nodes and Celery workers (seckill_site.edge).
# Matched against the TCP peer (or the PROXY protocol's client), never a header anyone can send.
include "edge-purgers.vcl";

sub vcl_recv {
    if (req.method == "PURGE") {
        call purge_by_key;
    }
    call vcl_req_host;
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

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);  # a pass: nothing is kept
    }
    if (beresp.status >= 500) {
        if (bereq.is_bgfetch) {
            return (abandon);  # keep serving the copy in grace
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
    # Everybody's answer holds no secret, so compressing it here leaks nothing (BREACH).
    if (!beresp.http.Content-Encoding && beresp.http.Content-Type ~ "^(text/|application/(json|javascript)|image/svg\+xml)") {
        set beresp.do_gzip = true;
    }
    return (deliver);
}

sub vcl_deliver {
    unset resp.http.xkey;
    # HIT: from the cache (in grace too; Age says how old); MISS: fetched and kept; PASS:
    # fetched and not kept.
    if (obj.uncacheable) {
        set resp.http.X-Cache = "PASS";
    } elsif (obj.hits > 0) {
        set resp.http.X-Cache = "HIT";
    } else {
        set resp.http.X-Cache = "MISS";
    }
}

sub vcl_synth {
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
