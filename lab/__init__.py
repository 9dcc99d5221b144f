"""The lab: experiments run against the shop, never imported by it.

Each drives the shop as its users and operators do — HTTP, management commands and the apps'
services and selectors — and checks the same invariants (docs/architecture.md, "Invariants").
"""
