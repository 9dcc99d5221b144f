# What the edge answers itself, without crossing Python (docs/edge.md, "Answers at the edge"):
# a shopper's result poll carrying the ticket their buy left (seckill.tickets), from the
# result, session and auth epoch the shop keeps in Redis, and an API buy of a sale the shop
# published closed (sales.sale_state's `closed` key, as long as a process's sold-out mark) or
# whose window in Redis is not open yet or any more.
# Anything it cannot decide simply passes to the shop unchanged, where the fast path and Django
# still decide.
#
# Two files on vcl_path say how: edge-answers-config.vcl (the Redis database `answers_redis`,
# the shop's key names, the ticket's life and the headers of Django's answer; tools/edge_answers.py
# writes it from the shop's settings) and edge-secrets.vcl (the ticket's key, mode 0600). Deploy's
# copies answer nothing.

import digest;
import redis;
import std;
import var;

include "edge-answers-config.vcl";
include "edge-secrets.vcl";

sub answers_recv {
    if (req.method == "GET" && req.url ~ "^/seckill/result\?goodsId=[1-9][0-9]{0,17}$"
        && req.http.Cookie ~ "(^|;)\s*seckill_result=" && !req.http.Authorization) {
        call answers_config;
        call answers_secret;
        if (var.get("answers-key") != "") {
            call answers_result_poll;
        }
    }
    # The fast path's own test (seckill.sale_id.API_BUY, a small body); a page buy names its
    # sale in the form, which VCL cannot read, and goes on to the fast path.
    if (req.method == "POST" && req.url ~ "^/api/v1/sales/[1-9][0-9]{0,17}/buy/[^/?]+$"
        && !req.http.Transfer-Encoding && (!req.http.Content-Length || req.http.Content-Length ~ "^[0-9]{1,3}$")) {
        call answers_config;
        if (var.get("answers-refusals") == "1") {
            call answers_closed_buy;
        }
    }
}

# A refusal the shop published: the one the gate last gave every buy (`closed`, as long as a
# process's sold-out mark: a second at most, deleted when a unit comes back), else the one the
# sale's window in Redis gives by Redis's clock (sales.sale_state.window_refusal). One script.
sub answers_closed_buy {
    call answers_language;
    if (var.get("answers-language") == "") {
        return;
    }
    var.set("answers-sale", regsub(req.url, "^/api/v1/sales/([0-9]+)/.*$", "\1"));
    answers_redis.command("EVAL");
    answers_redis.push({"local closed = redis.call('GET', KEYS[1]) if closed then return closed end "}
        + {"local w = redis.call('HMGET', KEYS[2], 'start', 'end', 'draw', 'entries') "}
        + {"local start, finish = tonumber(w[1]), tonumber(w[2]) if not start or not finish then return false end "}
        + {"local opens = 0 if (tonumber(w[3]) or 0) ~= 0 then opens = tonumber(w[4]) or 0 end "}
        + {"if opens == 0 then opens = start end "}
        + {"local t = redis.call('TIME') local now = tonumber(t[1]) + tonumber(t[2]) / 1000000 "}
        + {"if now < opens then return 'NOT_STARTED' end if now >= finish then return 'ENDED' end return false"});
    answers_redis.push("2");
    answers_redis.push(var.get("answers-prefix") + "sk:{" + var.get("answers-sale") + "}:closed");
    answers_redis.push(var.get("answers-prefix") + "sk:{" + var.get("answers-sale") + "}:window");
    answers_redis.execute(true);
    if (answers_redis.reply_is_string()
        && answers_redis.get_string_reply() ~ "^(SOLD_OUT|ENTRIES_CLOSED|NOT_STARTED|ENDED)$") {
        var.set("answers-refusal", answers_redis.get_string_reply());
        return (synth(200, "OK"));
    }
}

# The ticket, the session it names and the language must each be read one way only (one cookie
# of each name, Django's spelling); then Redis says whether the shop still vouches for it.
sub answers_result_poll {
    if (req.http.Cookie ~ "(^|;)\s*seckill_result=.*;\s*seckill_result="
        || req.http.Cookie ~ "(^|;)\s*sessionid=.*;\s*sessionid="
        || req.http.Cookie ~ "(^|;)\s*django_language=.*;\s*django_language=") {
        return;
    }
    set req.http.x-answers-ticket = regsub(req.http.Cookie, "^(.*;)?\s*seckill_result=([^;]*?)\s*(;.*)?$", "\2");
    set req.http.x-answers-session = regsub(req.http.Cookie, "^(.*;)?\s*sessionid=([^;]*?)\s*(;.*)?$", "\2");
    if (req.http.x-answers-ticket !~ "^[1-9][0-9]{0,17}\.[1-9][0-9]{0,17}\.[0-9a-f]{1,64}\.[0-9a-f]{16}:[1-9][0-9]{0,11}:[0-9a-f]{64}$"
        || req.http.x-answers-session !~ "^u[1-9][0-9]{0,17}\.[a-z0-9]{32}$"
        || regsub(req.http.x-answers-ticket, "\..*$", "") != regsub(req.http.x-answers-session, "^u([0-9]+)\..*$", "\1")
        || regsub(req.http.x-answers-ticket, "^[0-9]+\.([0-9]+)\..*$", "\1") != regsub(req.url, "^.*=", "")) {
        call answers_forget;
        return;
    }
    call answers_language;
    if (var.get("answers-language") == "" || var.get("answers-scheme") == "") {
        call answers_forget;
        return;
    }
    # Signed with the shop's ticket key (compared through a hash: no early exit to time), its
    # session the one this request carries, and younger than its life (counted up, to be early).
    if (digest.hash_sha256("0x" + regsub(req.http.x-answers-ticket, "^.*:", "")) != digest.hash_sha256(
            digest.hmac_sha256(var.get("answers-key"), regsub(req.http.x-answers-ticket, ":[0-9a-f]{64}$", "")))
        || regsub(req.http.x-answers-ticket, "^[^:]*\.([0-9a-f]{16}):.*$", "\1")
            != regsub(digest.hash_sha256(req.http.x-answers-session), "^(.{16}).*$", "\1")
        || std.integer(time=now) + 1 - std.integer(regsub(req.http.x-answers-ticket, "^[^:]*:([0-9]+):.*$", "\1"), 0)
            > std.integer(var.get("answers-ticket-seconds"), 0)) {
        call answers_forget;
        return;
    }
    call answers_result_read;
    call answers_forget;
    if (var.get("answers-data") ~ "^(0|-?[1-9][0-9]{0,18})$") {
        return (synth(200, "OK"));
    }
}

# Django's language (get_language_from_request without a URL prefix) where it is plain: the
# language cookie naming a language of the shop, else the first of a well-formed Accept-Language
# when it is English or Chinese at full weight (or none at all). Anything else: "", a pass.
sub answers_language {
    var.set("answers-language", "");
    if (req.http.Cookie ~ "(^|;)\s*django_language=") {
        var.set("answers-language", regsub(req.http.Cookie, "^(.*;)?\s*django_language=([^;]*?)\s*(;.*)?$", "\2"));
        if (var.get("answers-language") !~ "^(en|zh-hans)$") {
            var.set("answers-language", "");
        }
    } elsif (!req.http.Accept-Language) {
        var.set("answers-language", "en");
    } elsif (req.http.Accept-Language ~ "^.{1,500}$" && req.http.Accept-Language ~ "^(?:(?:[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*|\*)(?:\s*;\s*q=(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?))?(?:\s*,\s*|$))+$") {
        if (req.http.Accept-Language ~ "^(?i)en(-[a-z0-9]{1,8})*(\s*;\s*q=1(\.0{0,3})?)?(\s*,|$)") {
            var.set("answers-language", "en");
        } elsif (req.http.Accept-Language ~ "^(?i)zh(-[a-z0-9]{1,8})*(\s*;\s*q=1(\.0{0,3})?)?(\s*,|$)") {
            var.set("answers-language", "zh-hans");
        }
    }
}

# The result as the shop's poll gives it (sales.sale_state.result_beside), given only while the
# session is still stored and the user's auth epoch is the ticket's: one script on one Redis
# server; on Redis Cluster the sale's keys and the user's sit in two slots, so two.
sub answers_result_read {
    var.set("answers-user", regsub(req.http.x-answers-ticket, "\..*$", ""));
    var.set("answers-sale", regsub(req.http.x-answers-ticket, "^[0-9]+\.([0-9]+)\..*$", "\1"));
    var.set("answers-epoch", regsub(req.http.x-answers-ticket, "^[0-9]+\.[0-9]+\.([0-9a-f]+)\..*$", "\1"));
    var.set("answers-session-key", var.get("answers-session-prefix") + "{u" + var.get("answers-user") + "}" + req.http.x-answers-session);
    var.set("answers-epoch-key", var.get("answers-prefix") + "auth:{u" + var.get("answers-user") + "}:epoch");
    var.set("answers-result-key", var.get("answers-prefix") + "sk:{" + var.get("answers-sale") + "}:result:" + var.get("answers-user"));
    var.set("answers-drawn-key", var.get("answers-prefix") + "sk:{" + var.get("answers-sale") + "}:drawn");
    var.set("answers-data", "");
    if (var.get("answers-cluster") == "1") {
        answers_redis.command("EVAL");
        answers_redis.push({"if redis.call('EXISTS', KEYS[2]) == 1 and redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end return false"});
        answers_redis.push("2");
        answers_redis.push(var.get("answers-epoch-key"));
        answers_redis.push(var.get("answers-session-key"));
        answers_redis.push(var.get("answers-epoch"));
        answers_redis.execute(true);
        if (!answers_redis.reply_is_integer() || answers_redis.get_integer_reply() != 1) {
            return;
        }
        answers_redis.command("EVAL");
        answers_redis.push({"local v = redis.call('GET', KEYS[1]) if v == '-2' and redis.call('EXISTS', KEYS[2]) == 1 then return '-3' end return v"});
        answers_redis.push("2");
        answers_redis.push(var.get("answers-result-key"));
        answers_redis.push(var.get("answers-drawn-key"));
        answers_redis.execute(true);
    } else {
        answers_redis.command("EVAL");
        answers_redis.push({"if redis.call('EXISTS', KEYS[4]) == 0 or redis.call('GET', KEYS[3]) ~= ARGV[1] then return false end local v = redis.call('GET', KEYS[1]) if v == '-2' and redis.call('EXISTS', KEYS[2]) == 1 then return '-3' end return v"});
        answers_redis.push("4");
        answers_redis.push(var.get("answers-result-key"));
        answers_redis.push(var.get("answers-drawn-key"));
        answers_redis.push(var.get("answers-epoch-key"));
        answers_redis.push(var.get("answers-session-key"));
        answers_redis.push(var.get("answers-epoch"));
        answers_redis.execute(true);
    }
    if (answers_redis.reply_is_string()) {
        var.set("answers-data", answers_redis.get_string_reply());
    }
}

# The request's own headers that carried the ticket go no further (a pass sends the request on).
sub answers_forget {
    unset req.http.x-answers-ticket;
    unset req.http.x-answers-session;
}

# The answer, as Django gives it: its body, its headers (edge-answers-config.vcl, per scheme)
# and the request id it would give (the client's when it looks like one).
sub answers_synth {
    if (resp.status == 200 && req.method == "POST"
        && var.get("answers-refusal") ~ "^(SOLD_OUT|ENTRIES_CLOSED|NOT_STARTED|ENDED)$") {
        unset resp.http.Server;
        call answers_refusal;
        if (var.get("answers-refused") == "1") {
            call answers_request_id;
            return (deliver);
        }
    }
    if (resp.status == 200 && req.method == "GET" && var.get("answers-data") ~ "^(0|-?[1-9][0-9]{0,18})$"
        && var.get("answers-language") ~ "^(en|zh-hans)$") {
        unset resp.http.Retry-After;
        unset resp.http.Server;
        call answers_head;
        set resp.http.Content-Language = var.get("answers-language");
        call answers_request_id;
        set resp.body = {"{"code": 0, "msg": "success", "data": "} + var.get("answers-data") + "}";
        return (deliver);
    }
}

# The request id Django gives (seckill_site.logs.request_id_for): the client's when it looks
# like one, else a new one.
sub answers_request_id {
    if (req.http.X-Request-ID ~ "^[A-Za-z0-9._:-]{1,64}$") {
        set resp.http.X-Request-ID = req.http.X-Request-ID;
    } else {
        set resp.http.X-Request-ID = regsub(digest.hash_md5(server.identity + " " + req.xid + " " + now + " " + std.random(0, 1000000000)), "^0x", "");
    }
}
