"""Plot helpers: take an Axes, return it, label it, centre signed data on a diverging map."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import posenc
from posenc.book import plotting


@pytest.fixture(autouse=True)
def no_show(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("plot helpers must never call plt.show()")

    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


def test_encoding_heatmap_is_diverging_and_centred():
    fig, ax = plt.subplots()
    out = plotting.plot_encoding_heatmap(posenc.sinusoidal(50, 16), ax, title="t")
    assert out is ax
    image = ax.images[0]
    assert image.get_cmap().name == plotting.DIVERGING_CMAP
    assert image.get_clim() == (-1.0, 1.0)
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() == "t"
    assert len(fig.axes) == 2  # with its colour bar


def test_heatmap_picks_sequential_map_for_one_signed_data_and_symmetric_limits_otherwise():
    _fig, (a, b) = plt.subplots(1, 2)
    plotting.plot_heatmap(np.arange(6.0).reshape(2, 3), a)
    assert a.images[0].get_cmap().name == plotting.SEQUENTIAL_CMAP and a.images[0].get_clim() == (0.0, 5.0)
    plotting.plot_heatmap(np.array([[-1.0, 3.0]]), b)
    assert b.images[0].get_clim() == (-3.0, 3.0)


def test_similarity_and_binary_tables():
    _fig, (a, b) = plt.subplots(1, 2)
    assert plotting.plot_similarity(posenc.similarity(posenc.sinusoidal(20, 8)), a) is a
    assert "position" in a.get_xlabel() and "position" in a.get_ylabel()
    assert plotting.plot_binary_table(posenc.binary(16, 4), b) is b
    assert "bit" in b.get_xlabel()


def test_wave_stack_draws_one_wave_per_dimension_and_marks_the_tokens():
    _fig, ax = plt.subplots()
    fine = np.linspace(0, 9, 200)
    plotting.plot_wave_stack(
        fine,
        posenc.sinusoidal_at(fine, 4),
        ax,
        token_positions=np.arange(10),
        token_table=posenc.sinusoidal(10, 4),
        highlight=3,
    )
    waves = [line for line in ax.lines if len(line.get_xdata()) == 200]
    assert len(waves) == 4
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("dim 0 (sin, i=0)") and labels[3].startswith("dim 3 (cos, i=1)")
    assert any(abs(float(t.get_text()) - posenc.sinusoidal(10, 4)[3, 0]) < 1e-3 for t in ax.texts)


def test_per_pair_and_wavelength_plots():
    _fig, ax = plt.subplots()
    theta = posenc.rope_inv_freq(64)
    out = plotting.plot_wavelengths(
        {"default": posenc.wavelengths(theta), "linear x4": posenc.wavelengths(theta / 4)}, ax, context_length=2048
    )
    assert out is ax and ax.get_yscale() == "log"
    assert "wavelength" in ax.get_ylabel() and "pair" in ax.get_xlabel()
    styles = {line.get_linestyle() for line in ax.lines[:2]}
    assert len(styles) == 2  # a second cue beyond colour
    assert any("2048" in t.get_text() for t in ax.get_legend().get_texts())


def test_book_style_sets_an_opaque_background_and_colour_blind_cycle():
    style = plotting.book_style()
    assert style["savefig.facecolor"] == "white"
    assert list(style["axes.prop_cycle"].by_key()["color"])[:3] == list(plotting.OKABE_ITO[:3])


def test_heatmap_leaves_nan_cells_blank_and_shares_limits():
    _fig, ax = plt.subplots()
    masked = np.triu(np.full((4, 4), np.nan), 1) + np.tril(np.arange(16.0).reshape(4, 4))
    plotting.plot_heatmap(masked, ax, vmin=-1.0, vmax=20.0)
    assert ax.images[0].get_clim() == (-1.0, 20.0)
    with pytest.raises(ValueError, match="infinities"):
        plotting.plot_heatmap(np.array([[np.inf]]), ax)


def test_book_figures_record_their_smallest_text_in_the_png(tmp_path):
    from PIL import Image

    with plt.rc_context(plotting.book_style()):
        fig, ax = plt.subplots(dpi=100)
        ax.plot([0, 1], [2, 3])
        ax.text(0.5, 2.5, "note", fontsize=6)
        fig.savefig(tmp_path / "a.png")
        fig.savefig(tmp_path / "b.png", dpi=150)
        ax.texts[0].set_visible(False)  # hidden text does not count: the tick labels (11 pt) do
        fig.savefig(tmp_path / "c.png")
        plt.close(fig)
    recorded = [float(Image.open(tmp_path / n).text[plotting.SMALLEST_TEXT_KEY]) for n in ("a.png", "b.png", "c.png")]
    assert recorded == pytest.approx([6 * 100 / 72, 6 * 150 / 72, 11 * 100 / 72], abs=1e-3)


def test_the_record_leaves_the_pixels_unchanged(tmp_path):
    """Same pixels with and without the hook, for layouts that change when drawn more than once."""
    import numpy as np
    from PIL import Image

    def draw(style, layout):
        path = tmp_path / f"{layout}-{len(style)}.png"
        with plt.rc_context(style):
            fig, axes = plt.subplots(1, 2, figsize=(7, 2.5), layout=layout)
            for ax in axes:
                ax.plot([0, 1], [2, 3e4], label="a long label")
                ax.set_title("two\nlines")
            fig.legend(loc="outside lower center" if layout == "constrained" else "lower center", fontsize=8)
            fig.savefig(path, bbox_inches="tight")
            plt.close(fig)
        return Image.open(path)

    style = plotting.book_style()
    plain = {k: v for k, v in style.items() if k != "figure.hooks"}
    for layout in ("constrained", "tight", None):
        hooked, other = draw(style, layout), draw(plain, layout)
        assert plotting.SMALLEST_TEXT_KEY in hooked.text and plotting.SMALLEST_TEXT_KEY not in other.text
        assert hooked.size == other.size and np.array_equal(np.asarray(hooked), np.asarray(other)), layout
