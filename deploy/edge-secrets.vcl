# The result ticket's key, which deploy/edge-answers.vcl checks tickets with: none here, so the
# edge answers no poll. A deploy writes its own (python -m tools.edge_answers <dir>), mode 0600;
# never commit a real one.

sub answers_secret {
    var.set("answers-key", "");
}

# The waiting room's pass key (waitingroom.passes.pass_key), which deploy/edge-pass.vcl checks
# passes with: none here either.
sub pass_secret {
    var.set("pass-key", "");
    var.set("pass-key-old", "");
}
