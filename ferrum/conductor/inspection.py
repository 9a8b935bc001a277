# SPDX-License-Identifier: Apache-2.0
"""The inspection flow: inspect_hardware, then manageable (or inspect wait).

Functions here run in a worker with the node's exclusive lock and never
raise: on failure the node goes to ``inspect failed`` with ``last_error``.
An interface that returns ``INSPECTWAIT`` ends the wait with
``task.resume()`` once it has filled the node's properties; the
``[conductor]inspect_wait_timeout`` periodic fails a wait nobody ends.
"""

from ferrum.common import states
from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager


def do_inspect(task: task_manager.Task) -> None:
    """Run the inspect interface; the node is in ``inspecting``."""
    try:
        task.driver.inspect.validate(task)
        result = task.driver.inspect.inspect_hardware(task)
    except Exception as exc:
        task.process_event('fail', last_error=driver_errors.describe(
            task, 'Inspection failed', exc))
        return
    task.process_event('wait' if result == states.INSPECTWAIT else 'done')


def continue_inspection(task: task_manager.Task) -> None:
    """The driver ended ``inspect wait`` (node resumed to ``inspecting``)."""
    task.process_event('done')
