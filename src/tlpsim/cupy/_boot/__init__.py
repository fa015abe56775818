"""The folder `tlpsim cupy` puts first on its command's PYTHONPATH (its sitecustomize installs the
import hook); a package so that it is installed with tlpsim."""
