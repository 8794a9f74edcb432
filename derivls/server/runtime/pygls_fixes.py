"""Work-arounds for pygls bugs (pygls 2.1), as mixins of the protocol class.

``ForgetFinishedHandlers``: pygls's ``JsonRPCProtocol._execute_handler`` stores the future of
every coroutine, thread and generator handler in ``_request_futures`` under the message id, and
only a request's answer (``_send_handler_result``) or a client response removes it. A
notification gets a fresh ``uuid4`` id and ``_check_handler_result`` as callback, and the
handler a generator handler yields to gets another uuid and ``_run_generator`` as callback:
neither ever removes its entry. Each ``textDocument/didChange`` (a generator in pygls's
``LanguageServerProtocol``, which yields to the user's handler) so leaves a Future and a uuid
string behind, for the life of the server. The mixin drops an entry once its future is done
(``_request_futures`` only serves cancellation, and a finished future cannot be cancelled):
each handler run first drops the entries of the handlers that have finished.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ForgetFinishedHandlers"]


class ForgetFinishedHandlers:
    """Mix in before pygls's protocol class: `class P(ForgetFinishedHandlers, LanguageServerProtocol)`."""

    _request_futures: dict[Any, Any]

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        # Drop the entries of finished handlers first (not from a done-callback: pygls's shutdown
        # cancels the pending futures while iterating over the dict, and a callback would change it).
        futures = self._request_futures
        finished = [key for key, future in futures.items() if future.done()]
        for key in finished:
            del futures[key]
        super()._execute_handler(msg_id, handler, callback, args, kwargs)  # type: ignore[misc]
