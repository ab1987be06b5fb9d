"""Each agent's plug-in: its format's reading, evidence, report part and judge, bound to the seam
(`protocol`) that the jobs drive; `registry` lists them."""
