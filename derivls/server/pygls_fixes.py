"""Work-arounds for pygls bugs (pygls 2.1), as mixins of the protocol class.

``ForgetFinishedHandlers``: pygls's ``JsonRPCProtocol._execute_handler`` stores the future of
every coroutine, thread and generator handler in ``_request_futures`` under the message id, and
only a request's answer (``_send_handler_result``) or a client response removes it. A
notification gets a fresh ``uuid4`` id and ``_check_handler_result`` as callback, and the
handler a generator handler yields to gets another uuid and ``_run_generator`` as callback:
neither ever removes its entry. Each ``textDocument/didChange`` (a generator in pygls's
``LanguageServerProtocol``, which yields to the user's handler) so leaves a Future and a uuid
string behind, for the life of the server. The mixin drops an entry once its future is done
(``_request_futures`` only serves cancellation, and a finished future cannot be cancelled).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ForgetFinishedHandlers"]


class ForgetFinishedHandlers:
    """Mix in before pygls's protocol class: `class P(ForgetFinishedHandlers, LanguageServerProtocol)`."""

    _request_futures: dict[Any, Any]

    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)  # type: ignore[misc]
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        futures = self._request_futures

        def forget(done: Any) -> None:
            if futures.get(msg_id) is done:
                futures.pop(msg_id, None)

        future.add_done_callback(forget)
