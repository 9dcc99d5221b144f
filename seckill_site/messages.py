"""Django's message middleware, with the storage made only when a message is read or added."""

from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.messages.storage import default_storage
from django.utils.functional import SimpleLazyObject, empty


class LazyMessageMiddleware(MessageMiddleware):
    """The pages use messages; the gate and the JSON endpoints never do. Django makes the
    storage eagerly (an `import_string` and a cookie and a session storage per request) and
    asks it to save itself after every response: a few per cent of a sold-out answer's CPU.
    Made on first use, an untouched storage has nothing to save, exactly as Django's `update()`
    finds when no message was read or added."""

    def process_request(self, request):
        request._messages = SimpleLazyObject(lambda: default_storage(request))

    def process_response(self, request, response):
        messages = getattr(request, "_messages", None)
        if isinstance(messages, SimpleLazyObject) and messages._wrapped is empty:
            return response
        return super().process_response(request, response)
