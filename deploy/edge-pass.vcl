# The waiting room's pass, checked at the edge (docs/edge.md, "The waiting room's pass"): while
# a sale's room is on, a request of the sale's buy, captcha or path reaches the shop only with a
# pass for that sale (waitingroom.passes: signed, young enough, bound to the session it carries)
# and only while no operator queues everyone. Without one the edge answers "in the waiting room"
# itself: 503 and Retry-After with the shop's JSON envelope naming the waiting room's page, or a
# 303 to that page for a browser asking for a page.
# A request it lets through goes on unchanged, and the fast path and Django check the pass again;
# whatever the edge cannot read (another spelling of the sale's id, a page buy, which names its
# sale only in its form, an API token, which only Django resolves to a shopper admitted in line,
# unless everyone is queued) or cannot ask (Redis out of reach) passes too, for them to decide.
#
# Its configuration sits in the two files edge-answers.vcl includes (tools/edge_answers.py writes
# them from the shop's settings): pass_config and pass_words in edge-answers-config.vcl (where the
# rooms are in Redis, the answer's words), pass_secret in edge-secrets.vcl (the pass key). Deploy's
# copies check nothing.

import digest;
import std;
import var;

sub pass_recv {
    call pass_sale;
    if (var.get("pass-sale") == "") {
        return;
    }
    call pass_config;
    if (var.get("pass-check") != "1") {
        return;
    }
    call pass_secret;
    if (var.get("pass-key") == "") {
        return;
    }
    call pass_room_read;
    # "<queue everyone 0|1>:<pass seconds>"; anything else is a room that is off, or Redis that
    # did not answer: the shop decides.
    if (var.get("pass-room") !~ "^[01]:[0-9]{1,12}$") {
        return;
    }
    if (var.get("pass-room") ~ "^0:") {
        if (req.http.Authorization) {
            return;
        }
        call pass_held;
        if (var.get("pass-held") == "1") {
            return;
        }
    }
    var.set("pass-waiting", "1");
    return (synth(503, "Service Unavailable"));
}

# The sale a per-shopper request of a sale names, read as Django reads it: the id in the API's
# path, or the last `goodsId` of a page's query; leading zeros dropped, as positive_int does.
# "" for any other request, and for an id in a spelling VCL does not read (percent-encoded, with
# spaces): those pass.
sub pass_sale {
    var.set("pass-sale", "");
    var.set("pass-api", "");
    if ((req.method == "POST" && req.url ~ "^/api/v1/sales/0*[1-9][0-9]{0,17}/(path|buy/[^/?]+)(\?.*)?$")
        || ((req.method == "GET" || req.method == "HEAD")
            && req.url ~ "^/api/v1/sales/0*[1-9][0-9]{0,17}/captcha(/audio)?(\?.*)?$")) {
        var.set("pass-api", "1");
        var.set("pass-sale", regsub(req.url, "^/api/v1/sales/0*([0-9]+)/.*$", "\1"));
    } elsif ((req.method == "GET" || req.method == "HEAD")
        && req.url ~ "^/seckill/(verifyCode|verifyAudio|path)\?(.*&)?goodsId=0*[1-9][0-9]{0,17}(&(?!goodsId(=|&|$))[^&]*)*$") {
        var.set("pass-sale", regsub(req.url, "^[^?]*\?(.*&)?goodsId=0*([1-9][0-9]{0,17})(&.*)?$", "\2"));
    }
}

# "<queue everyone>:<pass seconds>" from the sale's room hash and the shop's switches
# (waitingroom.room): nothing when the room is off or Redis does not answer. One script on one
# Redis server; on Redis Cluster the room and the shop's switches are two slots, so two.
sub pass_room_read {
    var.set("pass-room", "");
    var.set("pass-room-key", var.get("pass-room-before") + var.get("pass-sale") + var.get("pass-room-after"));
    answers_redis.command("EVAL");
    if (var.get("pass-cluster") == "1") {
        answers_redis.push({"local r = redis.call('HMGET', KEYS[1], 'on', 'pass_seconds', 'queue_all') "}
            + {"if r[1] ~= '1' then return false end local s = r[2] "}
            + {"if not s or not string.match(s, '^%d+$') then s = '0' end "}
            + {"if r[3] == '1' then return '1:' .. s end return '0:' .. s"});
        answers_redis.push("1");
        answers_redis.push(var.get("pass-room-key"));
        answers_redis.execute(true);
        if (!answers_redis.reply_is_string() || answers_redis.get_string_reply() !~ "^0:") {
            if (answers_redis.reply_is_string()) {
                var.set("pass-room", answers_redis.get_string_reply());
            }
            return;
        }
        var.set("pass-seconds", regsub(answers_redis.get_string_reply(), "^0:", ""));
        answers_redis.command("EVAL");
        answers_redis.push({"if redis.call('HGET', KEYS[1], 'queue_all') == '1' then return '1' end return '0'"});
        answers_redis.push("1");
        answers_redis.push(var.get("pass-shop-key"));
        answers_redis.execute(true);
        if (answers_redis.reply_is_string() && answers_redis.get_string_reply() ~ "^[01]$") {
            var.set("pass-room", answers_redis.get_string_reply() + ":" + var.get("pass-seconds"));
        }
    } else {
        answers_redis.push({"local r = redis.call('HMGET', KEYS[1], 'on', 'pass_seconds', 'queue_all') "}
            + {"if r[1] ~= '1' then return false end local s = r[2] "}
            + {"if not s or not string.match(s, '^%d+$') then s = '0' end "}
            + {"if r[3] == '1' or redis.call('HGET', KEYS[2], 'queue_all') == '1' then return '1:' .. s end "}
            + {"return '0:' .. s"});
        answers_redis.push("2");
        answers_redis.push(var.get("pass-room-key"));
        answers_redis.push(var.get("pass-shop-key"));
        answers_redis.execute(true);
        if (answers_redis.reply_is_string()) {
            var.set("pass-room", answers_redis.get_string_reply());
        }
    }
}

# Whether the request holds a good pass for its sale, as waitingroom.passes.pass_read decides:
# the cookie `seckill_pass_<sale>` and the session cookie as Django reads them (the last of each
# name), in the pass's one spelling, for this sale, the session's digest the pass's, its age
# within the room's pass life by the whole seconds of the edge's clock (so the edge refuses only
# what pass_read refuses), and its HMAC-SHA256 right under the pass key or the first fallback's
# (compared through a hash: no early exit to time).
sub pass_held {
    var.set("pass-held", "");
    var.set("pass-value", regsub(var.get("pass-sale") + "|" + req.http.Cookie,
        "^([0-9]+)\|(?:.*;)?\s*seckill_pass_\1=([^;]*?)\s*(?:;.*)?$", "\2"));
    if (req.http.Cookie !~ "(^|;)\s*sessionid=") {
        return;
    }
    var.set("pass-session", regsub(req.http.Cookie, "^(?:.*;)?\s*sessionid=([^;]*?)\s*(?:;.*)?$", "\1"));
    # Django unquotes a quoted value.
    var.set("pass-value", regsub(var.get("pass-value"), {"^"(.*)"$"}, "\1"));
    var.set("pass-session", regsub(var.get("pass-session"), {"^"(.*)"$"}, "\1"));
    if (var.get("pass-value") !~ "^[1-9][0-9]{0,17}\.[1-9][0-9]{0,17}\.[0-9a-f]{16}:[1-9][0-9]{0,11}:[0-9a-f]{64}$") {
        return;
    }
    var.set("pass-signed-at", regsub(var.get("pass-value"), "^[^:]*:([0-9]+):.*$", "\1"));
    if (var.get("pass-session") == ""
        || regsub(var.get("pass-value"), "^[0-9]+\.([0-9]+)\..*$", "\1") != var.get("pass-sale")
        || regsub(var.get("pass-value"), "^[^:]*\.([0-9a-f]{16}):.*$", "\1")
            != regsub(digest.hash_sha256(var.get("pass-session")), "^(.{16}).*$", "\1")
        || std.integer(var.get("pass-signed-at"), 0) > std.integer(time=now)
        || std.integer(time=now) - std.integer(var.get("pass-signed-at"), 0)
            > std.integer(regsub(var.get("pass-room"), "^[01]:", ""), 0)) {
        return;
    }
    var.set("pass-message", regsub(var.get("pass-value"), ":[0-9a-f]{64}$", ""));
    var.set("pass-signature", digest.hash_sha256("0x" + regsub(var.get("pass-value"), "^.*:", "")));
    if (var.get("pass-signature") == digest.hash_sha256(digest.hmac_sha256(var.get("pass-key"), var.get("pass-message")))
        || (var.get("pass-key-old") != ""
            && var.get("pass-signature") == digest.hash_sha256(digest.hmac_sha256(var.get("pass-key-old"), var.get("pass-message"))))) {
        var.set("pass-held", "1");
    }
}

# The edge's "in the waiting room": a browser asking for a page of the shop (not the API) is
# sent to the waiting room's page in its language; the API and a page's scripts get the shop's
# JSON envelope with `waitingRoomUrl` and its status (waitingroom.answers.answer_kind's rule),
# anyone else 503; both with Retry-After. Never kept anywhere (private, no-store).
sub pass_synth {
    if (var.get("pass-waiting") != "1") {
        return;
    }
    call answers_language;
    call pass_words;
    unset resp.http.Server;
    set resp.http.Cache-Control = "private, no-store";
    set resp.http.Content-Language = var.get("pass-language");
    call answers_request_id;
    if (var.get("pass-api") != "1" && req.http.Accept ~ "(?i)(^|[,\s])text/html\s*(;|,|$)") {
        set resp.status = 303;
        set resp.reason = "See Other";
        set resp.http.Location = var.get("pass-url") + var.get("pass-sale");
        set resp.body = "";
        return (deliver);
    }
    if (var.get("pass-api") == "1" || req.http.Accept ~ "(?i)application/json" || req.http.X-Requested-With
        || (req.http.Sec-Fetch-Mode ~ "^(cors|same-origin)$" && (!req.http.Sec-Fetch-Dest || req.http.Sec-Fetch-Dest == "empty"))) {
        set resp.status = std.integer(var.get("pass-json-status"), 429);
        set resp.reason = "Too Many Requests";
    } else {
        set resp.status = 503;
        set resp.reason = "Service Unavailable";
    }
    set resp.http.Retry-After = var.get("pass-retry-after");
    set resp.http.Content-Type = "application/json";
    set resp.http.X-Content-Type-Options = "nosniff";
    set resp.body = var.get("pass-body-before") + var.get("pass-sale") + var.get("pass-body-after");
    return (deliver);
}
