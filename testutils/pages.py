"""Reading the shop's pages: the item page's panels."""

import re


def panels(page: str) -> dict[str, str]:
    """The panels the page carries for seckill.js (seckill.item.panels), by key, and "shown": the one
    it is served with."""
    found = dict(re.findall(r'<template data-panel-variant="([^"]+)">(.*?)</template>', page, re.S))
    found["shown"] = re.search(r'<div id="panel">(.*?)</div>\s*<form id="captcha-form"', page, re.S).group(1)
    return found
