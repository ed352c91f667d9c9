"""Makes the PDF fixtures of the pdf.read tests (fpdf2: `pip install fpdf2`).

Run from this folder: `python3 make.py`. The texts are in the public domain
(Lincoln's Gettysburg Address, 1863; the opening of the US Declaration of
Independence, 1776). The files are committed, so the tests need no Python.
"""
from fpdf import FPDF

GETTYSBURG = (
    "Four score and seven years ago our fathers brought forth on this continent, "
    "a new nation, conceived in Liberty, and dedicated to the proposition that all "
    "men are created equal. Now we are engaged in a great civil war, testing whether "
    "that nation, or any nation so conceived and so dedicated, can long endure."
)
GETTYSBURG_END = (
    "It is rather for us to be here dedicated to the great task remaining before us "
    "that this nation, under God, shall have a new birth of freedom and that "
    "government of the people, by the people, for the people, shall not perish "
    "from the earth."
)
DECLARATION = (
    "When in the Course of human events, it becomes necessary for one people to "
    "dissolve the political bands which have connected them with another, and to "
    "assume among the powers of the earth, the separate and equal station to which "
    "the Laws of Nature and of Nature's God entitle them, a decent respect to the "
    "opinions of mankind requires that they should declare the causes which impel "
    "them to the separation."
)


def public_domain():
    """Three pages: a core font, a blank page, and a Unicode TrueType font."""
    pdf = FPDF()
    pdf.set_title("Founding texts")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "The Gettysburg Address\n\n" + GETTYSBURG)
    pdf.add_page()  # p. 2: nothing on it
    pdf.add_page()
    pdf.add_font("DejaVu", fname="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    pdf.set_font("DejaVu", size=11)
    pdf.multi_cell(0, 6, "Déclaration — " + DECLARATION + "\n\n" + GETTYSBURG_END)
    pdf.output("public-domain.pdf")


def scanned():
    """Two pages of pictures only, as a scanner makes them."""
    from PIL import Image, ImageDraw

    img = Image.new("L", (400, 120), 255)
    ImageDraw.Draw(img).text((10, 50), "Four score and seven years ago", fill=0)
    img.save("/tmp/laika-scan.png")
    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        pdf.image("/tmp/laika-scan.png", x=10, y=10, w=180)
    pdf.output("scanned.pdf")


def encrypted():
    """One page that opens only with a password."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, GETTYSBURG)
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.output("encrypted.pdf")


if __name__ == "__main__":
    public_domain()
    scanned()
    encrypted()
