"""GuidedModal: the rubric's decision questions for a field, one at a time, ending in a code."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from ...model import Field, Question, Rubric
from ..widgets import RubricText

DIGITS = "123456789"


def _answer_rank(label: str) -> int:
    """0 for a yes, 1 for a no, 2 for anything else: answers are shown in that order."""
    first = label.strip().split(maxsplit=1)[0].strip(",.;:!").casefold() if label.strip() else ""
    return {"yes": 0, "no": 1}.get(first, 2)


def answer_order(labels: list[str]) -> list[int]:
    """The indexes of a question's answers in the order shown: yes, then no, then the others as the
    rubric lists them. So [1] is always Yes and [2] always No, whatever order the rubric wrote."""
    return sorted(range(len(labels)), key=lambda i: (_answer_rank(labels[i]), i))


class GuidedModal(ModalScreen[str | None]):
    """Walk a field's decision questions; dismiss with the proposed code once confirmed.

    Data-driven: the questions, answers and where they lead all come from
    ``Field.decision``. Digits choose an answer in the order shown (always yes first, then
    no: see :func:`answer_order`), ``y`` and ``n`` choose yes and no, backspace steps back,
    escape cancels.
    """

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="guided.cancel"),
        Binding("backspace", "back", "Back", id="guided.back"),
        Binding("y", "answer_word('yes')", "Yes", id="guided.yes"),
        Binding("n", "answer_word('no')", "No", id="guided.no"),
        *[Binding(d, f"answer({d})", show=False) for d in DIGITS],
    ]

    def __init__(self, rubric: Rubric, fld: Field) -> None:
        super().__init__()
        self.rubric = rubric
        self.field = fld
        self.questions = {q.id: q for q in fld.decision}
        self.path: list[str] = [fld.decision[0].id]
        """Ids of the questions asked so far; the last is on screen."""
        self.proposal: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="guided-dialog"):
            yield Static(f"Guided coding · {self.field.label}", classes="dialog-title")
            with VerticalScroll(id="guided-body"):
                yield Static("", id="guided-step")
                yield RubricText(id="guided-question")
                yield OptionList(id="guided-answers")
            yield Static("1 or y: yes · 2 or n: no · enter answers · backspace back · escape cancels",
                         classes="dialog-hint", markup=False)

    async def on_mount(self) -> None:
        await self._show()

    @property
    def question(self) -> Question:
        return self.questions[self.path[-1]]

    async def _show(self) -> None:
        answers = self.query_one("#guided-answers", OptionList)
        step = self.query_one("#guided-step", Static)
        if self.proposal is not None:
            code = self.rubric.code(self.proposal)
            step.update(f"Proposed code after {len(self.path)} question(s)")
            self.query_one("#guided-question", RubricText).show(
                f"**{code.id} · {code.label}**: {code.definition}\n\n{code.guidance}")
            # Bracketed numbers choose an answer; they are never codes (a rubric may have codes 1 and 2).
            answers.set_options([Option(Text(f"[1/y] Use code {code.id} · {code.label}"), id="accept"),
                                 Option(Text("[2/n] Back"), id="back")])
        else:
            question = self.question
            step.update(f"Question {len(self.path)}")
            body = question.ask + (f"\n\n*{question.help}*" if question.help else "")
            self.query_one("#guided-question", RubricText).show(body)
            labels = [answer.label for answer in question.answers]
            options = []
            for n, index in enumerate(answer_order(labels), 1):
                word = {0: "/y", 1: "/n"}.get(_answer_rank(labels[index]), "")
                options.append(Option(Text(f"[{n}{word}] {labels[index]}"), id=str(index)))
            answers.set_options(options)
        answers.highlighted = 0
        answers.focus()

    async def _choose(self, option_id: str) -> None:
        if self.proposal is not None:
            if option_id == "accept":
                self.dismiss(self.proposal)
            else:
                await self.action_back()
            return
        answer = self.question.answers[int(option_id)]
        if answer.code is not None:
            self.proposal = answer.code
        elif answer.next is not None:
            self.path.append(answer.next)
        await self._show()

    @on(OptionList.OptionSelected, "#guided-answers")
    async def answer_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            await self._choose(event.option.id)

    async def action_answer(self, number: int) -> None:
        answers = self.query_one("#guided-answers", OptionList)
        if 1 <= number <= answers.option_count:
            option_id = answers.get_option_at_index(number - 1).id
            if option_id is not None:
                await self._choose(option_id)

    async def action_answer_word(self, word: str) -> None:
        """``y`` / ``n``: the yes (or no) answer of the question shown; on the proposal, y uses it."""
        if self.proposal is not None:
            await self._choose("accept" if word == "yes" else "back")
            return
        rank = 0 if word == "yes" else 1
        for index, answer in enumerate(self.question.answers):
            if _answer_rank(answer.label) == rank:
                await self._choose(str(index))
                return
        self.notify(f"This question has no “{word}” answer: use the digits.", severity="warning")

    async def action_back(self) -> None:
        if self.proposal is not None:
            self.proposal = None
        elif len(self.path) > 1:
            self.path.pop()
        await self._show()

    def action_cancel(self) -> None:
        self.dismiss(None)
