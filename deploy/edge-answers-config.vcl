# What deploy/edge-answers.vcl answers with: deploy's copy answers nothing. A deploy writes its
# own next to edge-backend.vcl from the shop's settings (python -m tools.edge_answers <dir>).

sub vcl_init {
    new answers_redis = redis.db(location="127.0.0.1:6379", type=master, connection_timeout=500,
        command_timeout=500, max_command_retries=0, sickness_ttl=5);
}

sub answers_config {
    var.set("answers-refusals", "");
    var.set("answers-scheme", "");
}

sub answers_refusal {
}

sub answers_head {
}

# deploy/edge-pass.vcl's: no pass is checked.
sub pass_config {
    var.set("pass-check", "");
}

sub pass_words {
}
